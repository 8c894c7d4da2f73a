import Foundation

// What a system downloader should fetch for the next update: the planning half of a sync,
// with no download and no change to the store.
extension BundleSync {
    /// The files the server's current release needs that the live version lacks, verified as
    /// a sync verifies a root (signatures, the tree's digests and caps), selected for this
    /// environment and rollout bucket, one download per distinct content. Files the manifest
    /// gives no SHA-256 digest and size for are left out: nothing could check them on arrival,
    /// so the sync fetches them itself. Manifests are left out too (the sync reads them).
    func transferPlan() async throws -> [PlannedDelivery] {
        var resolved = self
        if environment[RolloutBucket.key] == nil {
            let bucket = RolloutBucket.of(installID: try store.installID(), bundle: baseURL.absoluteString)
            resolved.environment[RolloutBucket.key] = .number(String(bucket))
        }
        return try await resolved.transferPlanForEnvironment()
    }

    private func transferPlanForEnvironment() async throws -> [PlannedDelivery] {
        let fetcher = Fetcher(transport: transport, configuration: configuration, localRoot: localRoot)
        let root = try await wholeRoot(fetcher: fetcher)
        let keys = try await KeyRotation.currentKeys(
            configuration: configuration,
            statePath: store.keyDocumentPath,
            fetcher: fetcher
        )
        let live = try store.liveRecord()
        let selection = try await manifestTree(
            fetcher: fetcher,
            live: live,
            liveDirectory: store.liveVersionID.map(store.versionPath),
            keys: keys
        ).select(root: root, fetched: true)
        var byDigest: [String: PlannedDelivery] = [:]
        var order: [String] = []
        for file in selection.files where selection.documents[file.path] == nil {
            guard let hash = file.hash, hash.algorithm == .sha256, let size = file.size else { continue }
            if live?.file(at: file.path.string)?.hash == hash { continue }
            if byDigest[hash.hex] == nil {
                order.append(hash.hex)
                byDigest[hash.hex] = PlannedDelivery(
                    url: selection.layout.url(for: file.path, hash: hash, base: baseURL),
                    size: size,
                    sha256: hash.hex,
                    paths: []
                )
            }
            byDigest[hash.hex]!.paths.append(file.path.string)
        }
        return order.map { byDigest[$0]! }
    }

    /// The root manifest's bytes, asked for unconditionally (a plan reads the server's current
    /// release whatever is installed).
    func wholeRoot(fetcher: Fetcher) async throws -> Data {
        let manifestURL = baseURL.appendingPathComponent("manifest.json")
        guard
            case .fetched(let root, _) = try await fetcher.document(
                at: manifestURL,
                validators: nil,
                limit: configuration.maxDocumentSize
            )
        else { throw FreshAirError.httpStatus(304, url: manifestURL) }
        return root
    }
}
