import FreshAir

/// The `Cache-Control` a published object carries, by what it is; `breeze publish` stores it
/// with every S3 object and `breeze serve` sends it, so a CDN in front of either caches alike.
///
/// Documents that name other files (`manifest.json`, `index.json`, a package's `.sig`) decide
/// what a device installs next: caches keep them briefly and must ask again once stale, so a
/// publish reaches devices within about `max-age`. Content at a path may be overwritten by the
/// next version, so it is cached as briefly; a device that meets an edge still holding the old
/// bytes under a new manifest sees a digest mismatch, keeps its version and retries later.
package struct CachePolicy: Sendable, Hashable {
    /// For `manifest.json`, `index.json` and signatures.
    package var documents: String
    /// For every other file.
    package var content: String

    package static let defaultDocuments = "public, max-age=60, must-revalidate"
    package static let defaultContent = "public, max-age=60"

    package init(documents: String = Self.defaultDocuments, content: String = Self.defaultContent) {
        self.documents = documents
        self.content = content
    }

    /// The header value for the object at `path` (relative, `/`-separated).
    package func cacheControl(for path: String) -> String {
        Self.isDocument(path) ? documents : content
    }

    /// Whether `path` names other files: it goes up after them and is revalidated by caches.
    package static func isDocument(_ path: String) -> Bool {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return name == "manifest.json" || name == "index.json" || name.hasSuffix(PackageSignature.suffix)
    }
}
