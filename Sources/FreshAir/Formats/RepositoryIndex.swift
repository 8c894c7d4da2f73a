import Foundation

/// A repository's `index.json`: `{"bundles": {"art": {"version": 4}, "sound": {"version": 7}}}`.
///
/// Each bundle may also carry a `digest` of its content (written by `breeze`), which old
/// clients ignore.
public struct RepositoryIndex: Sendable, Hashable, Codable {
    public struct Bundle: Sendable, Hashable, Codable {
        public var version: Int
        /// SHA-256 over the bundle's files, so a publisher only bumps the version on change.
        public var digest: String?

        public init(version: Int, digest: String? = nil) {
            self.version = version
            self.digest = digest
        }
    }

    public var bundles: [String: Bundle]

    public init(bundles: [String: Bundle] = [:]) {
        self.bundles = bundles
    }

    /// Reads an index, naming `source` in errors. Bundle names must be plain file names.
    public init(data: Data, source: String) throws(ManifestError) {
        let document: JSONValue
        do { document = try JSONReader.parse(data) } catch { throw ManifestError(source: source, problem: .invalidJSON(error)) }
        func shape(_ detail: String) -> ManifestError {
            ManifestError(source: source, problem: .unexpectedShape("expected {\"bundles\": {\"<name>\": {\"version\": <integer>}}}: \(detail)"))
        }
        guard let entries = document["bundles"]?.pairs else { throw shape("\"bundles\" is missing or not an object") }
        bundles = [:]
        for (name, entry) in entries {
            guard let version = entry["version"]?.integer, let number = Int(exactly: version) else {
                throw shape("\"\(name)\" has no whole-number \"version\"")
            }
            bundles[name] = Bundle(version: number, digest: entry["digest"]?.string)
        }
        for name in bundles.keys {
            guard (try? BundlePath(name))?.components.count == 1, !name.hasPrefix(".") else {
                throw ManifestError(source: source, problem: .unexpectedShape("bundle name \"\(name)\" is not a plain file name"))
            }
        }
    }
}
