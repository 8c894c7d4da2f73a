import Foundation
import Synchronization

// Walking the tree of manifests, from the live copy where its digest allows.
extension BundleSync {
    /// The tree walker for this bundle: a child manifest comes from the live version when its
    /// parent lists the digest the live copy was verified to have (so an unchanged tree costs
    /// no request beyond the root), else from the server, checked against that digest.
    func manifestTree(
        fetcher: Fetcher,
        live: VersionRecord?,
        liveDirectory: String?,
        keys: KeySet?
    ) -> ManifestTree {
        let baseURL = baseURL
        var tree = ManifestTree(baseURL: baseURL, environment: environment, maxDepth: configuration.maxManifestDepth) {
            path,
            hash,
            layout,
            limit in
            if let hash, let record = live?.file(at: path.string), record.hash == hash, let liveDirectory,
                let data = try await BlockingPool.run({
                    // Read and re-hashed off the cooperative pool: a tree may hold many manifests.
                    FileManager.default.contents(atPath: liveDirectory + "/" + path.string)
                        .flatMap { ContentHash.of($0, using: hash.algorithm) == hash ? $0 : nil }
                })
            {
                return (data, false)
            }
            let childURL = layout.url(for: path, hash: hash, base: baseURL)
            let data = try await fetcher.listedDocument(at: childURL, path: path.string, expected: hash, limit: limit)
            return (data, true)
        }
        tree.concurrency = configuration.concurrency
        tree.keys = keys
        tree.maxTotalBytes = configuration.maxManifestTreeSize
        tree.maxDocumentBytes = configuration.maxDocumentSize
        tree.maxEntries = configuration.maxManifestEntries
        tree.livePaths = live?.fileTable ?? FileTable()
        return tree
    }
}
