import Foundation
import FreshAir

/// Adds a folder as the next version of a bundle in a repository folder (the layout
/// ``Repository`` reads: `<repo>/index.json` and `<repo>/<name>-<version>.tar.gz`), bumping
/// the version only when the content changed.
public enum RepositoryPublisher {
    public struct Outcome: Sendable {
        public var name: String
        public var version: Int
        /// `false` when the folder matched the current version, so nothing was written.
        public var published: Bool
        public var archive: URL?
    }

    public static func add(folder: URL, as name: String, to repository: URL) throws -> Outcome {
        guard (try? BundlePath(name))?.components.count == 1 else {
            throw PackagingError("'\(name)' is not a plain bundle name")
        }
        let indexURL = repository.appendingPathComponent("index.json")
        var index = RepositoryIndex()
        if let data = try? Data(contentsOf: indexURL) {
            do { index = try RepositoryIndex(data: data, source: indexURL.path) } catch { throw PackagingError("\(error)") }
        }
        let digest = try BundleFolder.digest(of: folder)
        if let current = index.bundles[name], current.digest == digest {
            return Outcome(name: name, version: current.version, published: false, archive: nil)
        }
        let version = (index.bundles[name]?.version ?? 0) + 1
        try FileManager.default.createDirectory(at: repository, withIntermediateDirectories: true)
        let archive = repository.appendingPathComponent("\(name)-\(version).tar.gz")
        try PackageWriter.write(folder: folder, to: archive, topLevelFolder: "\(name)-\(version)")
        index.bundles[name] = RepositoryIndex.Bundle(version: version, digest: digest)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        // The index goes last: a client never sees a version whose archive is missing. Its
        // time moves past the old one's second, so the server's validators change with it.
        let previous = ServedFileTime.modified(indexURL)
        try encoder.encode(index).write(to: indexURL, options: .atomic)
        try ServedFileTime.moveForward(indexURL, past: previous)
        return Outcome(name: name, version: version, published: true, archive: archive)
    }
}
