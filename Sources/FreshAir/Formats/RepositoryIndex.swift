package import Foundation

/// A repository's `index.json`: `{"bundles": {"art": {"version": 4}, "sound": {"version": 7}}}`.
///
/// Each bundle may also carry a `digest` of its content (written by `breeze`), and, in a
/// signed index, its archive's `sha256` and `size`; old clients ignore both. A signed index
/// (`breeze sign REPO`, `breeze repo add --key`) also carries `ReleaseFields`.
package struct RepositoryIndex: Sendable, Hashable, Codable {
    /// One bundle of the repository: its version and archive.
    package struct Bundle: Sendable, Hashable, Codable {
        /// The version to install: `<name>-<version>.tar.gz`.
        package var version: Int
        /// SHA-256 over the bundle's files, so a publisher only bumps the version on change.
        package var digest: String?
        /// SHA-256 (hex) and size of the version's archive, `<name>-<version>.tar.gz`: what a
        /// device that pins keys checks the download against.
        package var sha256: String?
        /// The archive's size, when signed.
        package var size: Int64?

        /// A bundle entry.
        package init(version: Int, digest: String? = nil, sha256: String? = nil, size: Int64? = nil) {
            self.version = version
            self.digest = digest
            self.sha256 = sha256
            self.size = size
        }
    }

    /// Every bundle, by name.
    package var bundles: [String: Bundle]
    /// Identity (the repository id), sequence, expiry and signatures, when signed.
    package var release = ReleaseFields()

    private enum CodingKeys: String, CodingKey { case bundles }

    /// An index of `bundles`.
    package init(bundles: [String: Bundle] = [:]) {
        self.bundles = bundles
    }

    /// The index as `breeze` writes it, without signatures: release fields first, bundles by name.
    package var unsignedJSON: JSONValue {
        var pairs: [(key: String, value: JSONValue)] = []
        if let identity = release.identity { pairs.append(("identity", .string(identity))) }
        if let sequence = release.sequence { pairs.append(("sequence", JSONValue(sequence))) }
        if let expires = release.expires { pairs.append(("expires", .string(expires.formatted(.iso8601)))) }
        let entries = bundles.keys.sorted().map { name -> (key: String, value: JSONValue) in
            let bundle = bundles[name]!
            var fields: [(key: String, value: JSONValue)] = [("version", JSONValue(bundle.version))]
            if let digest = bundle.digest { fields.append(("digest", .string(digest))) }
            if let sha256 = bundle.sha256 { fields.append(("sha256", .string(sha256))) }
            if let size = bundle.size { fields.append(("size", JSONValue(size))) }
            return (name, .object(fields))
        }
        pairs.append(("bundles", .object(entries)))
        return .object(pairs)
    }

    /// `"2"`, `" 2 "`: digits only, so that `"2.1"` or `"-1"` is still refused.
    private static func wholeNumber(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int64(trimmed)
    }

    /// Reads an index, naming `source` in errors. Bundle names must be plain file names;
    /// versions are whole numbers, written as numbers or as strings of digits.
    /// The most bundles an index may list: checked on the bytes, before they are parsed, so a
    /// hostile index costs at most what this many entries take (a parsed 1,000,000-bundle
    /// index held 406 MB).
    package static let maxBundles = 100_000

    /// Whether `data` may be signed: it names a `signatures` member, or has a `\u` escape that
    /// could spell one. An index that may not is refused unparsed where keys are pinned.
    package static func mayBeSigned(_ data: Data) -> Bool {
        !Manifest.survey(data, maxEntries: 0, letGo: nil).isUnsigned
    }

    /// `requireSignature` (keys pinned) refuses, before any parse, an index that cannot be
    /// signed (see ``mayBeSigned(_:)``), as ``Manifest`` refuses such a root.
    package init(data: Data, source: String, requireSignature: Bool = false) throws(ManifestError) {
        if requireSignature, !Self.mayBeSigned(data) { throw ManifestError(source: source, problem: .unsigned) }
        let listed = data.withUnsafeBytes {
            ByteSearch.count(of: Array(#""version""#.utf8), in: $0, limit: Self.maxBundles + 1)
        }
        guard listed <= Self.maxBundles else {
            throw ManifestError(
                source: source,
                problem: .unexpectedShape(
                    "it lists more than \(Self.maxBundles) bundles, the most a repository index may: split the repository"
                )
            )
        }
        let document: JSONValue
        do { document = try JSONReader.parse(data) } catch {
            throw ManifestError(source: source, problem: .invalidJSON(error))
        }
        func shape(_ detail: String) -> ManifestError {
            ManifestError(
                source: source,
                problem: .unexpectedShape("expected {\"bundles\": {\"<name>\": {\"version\": <integer>}}}: \(detail)")
            )
        }
        guard let entries = document["bundles"]?.pairs else { throw shape("\"bundles\" is missing or not an object") }
        bundles = [:]
        for (name, entry) in entries {
            // Some publishers wrote the version as a string ("2"); it is the same number.
            guard let version = entry["version"]?.integer ?? entry["version"]?.string.flatMap(Self.wholeNumber),
                let number = Int(exactly: version), number >= 0
            else {
                throw shape("\"\(name)\" has no whole-number \"version\"")
            }
            bundles[name] = Bundle(
                version: number,
                digest: entry["digest"]?.string,
                sha256: entry["sha256"]?.string,
                size: entry["size"]?.integer
            )
        }
        release = try ReleaseFields(document: document, source: source)
        var names = PathCollisionsKeepingPaths()
        for name in bundles.keys.sorted() {
            guard let path = try? BundlePath(name), path.components.count == 1, !name.hasPrefix(".") else {
                throw ManifestError(
                    source: source,
                    problem: .unexpectedShape("bundle name \"\(name.debugEscaped)\" is not a plain file name")
                )
            }
            // Each bundle becomes a folder: two names that are one folder on a Mac are refused.
            do { try names.insert(path) } catch { throw ManifestError(source: source, problem: .unsafePath(error)) }
        }
    }
}
