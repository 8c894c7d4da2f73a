import FreshAir

/// The `Cache-Control` a published object carries, by what it is; `breeze publish` stores it
/// with every S3 object and `breeze serve` sends it, so a CDN in front of either caches alike.
///
/// Documents that name other files (`manifest.json`, `index.json`, a package's `.sig`) decide
/// what a device installs next: caches keep them briefly and must ask again once stale, so a
/// publish reaches devices within about `max-age`. Content at a path may be overwritten by the
/// next version, so it is cached as briefly; a device that meets an edge still holding the old
/// bytes under a new manifest sees a digest mismatch, keeps its version and retries later.
/// Objects of the object layout (``ContentLayout``) are named by their bytes and never
/// change: cached for a year, marked `immutable` so browsers do not even revalidate. So is a
/// bundle's pack (`files-<16 hex>.freshairpack`, ``FilePack``), named by its digest too.
package struct CachePolicy: Sendable, Hashable {
    /// For `manifest.json`, `index.json` and signatures.
    package var documents: String
    /// For every other file at a path.
    package var content: String
    /// For objects named by their SHA-256.
    package var immutable: String

    package static let defaultDocuments = "public, max-age=60, must-revalidate"
    package static let defaultContent = "public, max-age=60"
    package static let defaultImmutable = "public, max-age=31536000, immutable"

    package init(
        documents: String = Self.defaultDocuments,
        content: String = Self.defaultContent,
        immutable: String = Self.defaultImmutable
    ) {
        self.documents = documents
        self.content = content
        self.immutable = immutable
    }

    /// The header value for the file at `path` (relative, `/`-separated): `objects/<sha256>`
    /// is an object, whatever folder holds that `objects`.
    package func cacheControl(for path: String) -> String {
        if Self.isObject(path) || Self.isPack(path) { return immutable }
        return Self.isDocument(path) ? documents : content
    }

    /// `…objects/<64 lowercase hex digits>`.
    static func isObject(_ path: String) -> Bool {
        let parts = path.split(separator: "/")
        guard parts.count >= 2, parts[parts.count - 2] == "objects", let name = parts.last else { return false }
        return ContentHash.isLowercaseHex(name, digits: 64)
    }

    /// A pack as `breeze generate --pack` names it (`FilePack/isNamedByDigest(_:)`), in any folder.
    static func isPack(_ path: String) -> Bool {
        FilePack.isNamedByDigest(path.split(separator: "/").last ?? "")
    }

    /// Whether `path` names other files: it goes up after them and is revalidated by caches.
    package static func isDocument(_ path: String) -> Bool {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return name == "manifest.json" || name == "index.json" || name.hasSuffix(PackageSignature.suffix)
    }
}
