package import Foundation
package import FreshAir

/// A root document (a bundle's `manifest.json`, a repository's `index.json`, a package's
/// `.sig`) read once for what a release checks against it: its release fields and the files
/// it lists with their sizes.
package struct RootDocument: Sendable {
    /// Sequence, expiry, signatures; `nil` when the bytes do not read as the document.
    package var release: ReleaseFields?
    /// A manifest's entries once per path (a staged root lists a path twice, gated both ways:
    /// one file, its larger size), a repository index's bundles; empty for a package's `.sig`
    /// (one file) or a document that does not read.
    package var listing: [String: Int64] = [:]

    package init(path: String, data: Data) {
        switch path {
        case "manifest.json":
            let manifest = try? Manifest(data: data, source: path)
            release = manifest?.release
            listing = (manifest?.entries ?? []).reduce(into: [:]) { result, entry in
                result[entry.path.string] = max(result[entry.path.string] ?? 0, entry.size ?? 0)
            }
        case "index.json":
            let index = try? RepositoryIndex(data: data, source: path)
            release = index?.release
            listing = index?.bundles.mapValues { $0.size ?? 0 } ?? [:]
        default:
            release = SignerContinuity.release(of: path, in: data)
        }
    }
}
