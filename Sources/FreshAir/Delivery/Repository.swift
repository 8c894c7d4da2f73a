import Foundation
import Synchronization

/// A repository of versioned bundles: Asset Distribution Manager's model.
///
/// `<source>/<id>/index.json` lists bundles and integer versions; bundle `cats` at version 3
/// is `<cdn or source>/<id>/cats-3.tar.gz` (or `.tar`). An update fetches the index
/// conditionally, downloads only bundles whose version changed (several at once), and makes
/// each one live atomically at `directory/<name>/`. Bundles no longer listed are removed.
/// Any number of repositories can live side by side: there is no shared state.
///
/// By default each bundle switches on its own (``Switching/perBundle``): after an interrupted
/// update some bundles can be new and others old until the next one. An app whose bundles must
/// match asks for ``Switching/wholeRepository``: `directory` is then a link to a snapshot of
/// every bundle, replaced in one step once every bundle of the index is installed.
///
/// ```swift
/// let level1 = Repository(source: URL(string: "https://s3.amazonaws.com/my-bucket/")!,
///                         id: "com.adm.level1", directory: caches.appendingPathComponent("level1"))
/// try await level1.run()
/// let dogs = Repository.bundle(descriptor: "com.adm.level1.dogs", in: [level1])
/// ```
public struct Repository: Sendable {
    /// Where `<id>/index.json` is published.
    public let source: URL
    /// Repository ids may contain dots: `com.adm.level1`.
    public let id: String
    /// Where bundle archives are downloaded from, when not from ``source``.
    public let cdn: URL?
    /// Where each bundle's live version appears, as `directory/<name>/`.
    public let directory: URL
    /// Retries, limits, keys and timeouts.
    public var configuration: SyncConfiguration
    /// How an update's bundles become live.
    public let switching: Switching
    private let transport: any HTTPTransport

    /// How the bundles of one update become live.
    public enum Switching: Sendable, Hashable {
        /// Each bundle switches atomically on its own, as soon as it is installed.
        case perBundle
        /// `directory` is a link to a snapshot holding every bundle; it is replaced in one step
        /// once every bundle the index names is installed, so readers see the whole old set or
        /// the whole new one. The repository's state then lives beside `directory`
        /// (`.<name>.freshair-repository`), not inside it.
        case wholeRepository
    }

    /// Creates a repository client; nothing happens until ``run(reporting:)``.
    ///
    /// - Parameters:
    ///   - source: where `<id>/index.json` is published.
    ///   - id: the repository's identifier, its folder on the server.
    ///   - cdn: where the archives are, when not beside the index.
    ///   - directory: where the bundles are installed, one folder each.
    ///   - switching: each bundle on its own, or the whole repository at once.
    ///   - transport: how requests are sent; by default a `URLSession` of this value's own,
    ///     with ``SyncConfiguration/concurrency`` connections per host. Pass one to share its
    ///     connections.
    ///   - configuration: retries, limits, keys and timeouts.
    public init(
        source: URL,
        id: String,
        cdn: URL? = nil,
        directory: URL,
        switching: Switching = .perBundle,
        transport: Transport? = nil,
        configuration: SyncConfiguration = SyncConfiguration()
    ) {
        let base: (any HTTPTransport)? = transport?.base
        self.init(
            source: source,
            id: id,
            cdn: cdn,
            directory: directory,
            switching: switching,
            transport: base,
            configuration: configuration
        )
    }

    /// The same, with any `HTTPTransport` (a test's, AsyncHTTPClient's).
    package init(
        source: URL,
        id: String,
        cdn: URL? = nil,
        directory: URL,
        switching: Switching = .perBundle,
        transport: (any HTTPTransport)?,
        configuration: SyncConfiguration = SyncConfiguration()
    ) {
        self.source = source
        self.id = id
        self.cdn = cdn
        self.directory = directory.standardizedFileURL
        self.switching = switching
        self.transport = transport ?? URLSessionTransport(connectionsPerHost: configuration.concurrency)
        self.configuration = configuration
    }

    /// The folder holding the repository's own state and each bundle's store.
    var stateFolder: URL {
        switch switching {
        case .perBundle: directory.appendingPathComponent(".freshair-repository")
        case .wholeRepository:
            directory.deletingLastPathComponent().appendingPathComponent(
                ".\(directory.lastPathComponent).freshair-repository"
            )
        }
    }

    /// The store behind bundle `name`.
    public func store(forBundle name: String) -> BundleStore {
        let root = stateFolder.appendingPathComponent("bundles/\(name)")
        // A whole-repository switch keeps each bundle's own link inside its store; readers go
        // through the snapshot.
        return BundleStore(root: root, liveLink: switching == .perBundle ? directory.appendingPathComponent(name) : nil)
    }

    /// The live folder of bundle `name`, or `nil` when it is not installed.
    public func bundle(named name: String) -> URL? {
        switch switching {
        case .perBundle: return store(forBundle: name).liveDirectory
        case .wholeRepository:
            let folder = directory.appendingPathComponent(name).resolvingSymlinksInPath()
            return Disk.isDirectory(folder.path) ? folder : nil
        }
    }

    /// The installed version of bundle `name`.
    public func installedVersion(of name: String) -> Int? {
        (try? store(forBundle: name).liveRecord())?.flatMap(\.bundleVersion)
    }

    /// Finds `"<repoId>.<name>"` among `repositories`: the last dot-separated part names the
    /// bundle, the rest the repository.
    public static func bundle(descriptor: String, in repositories: [Repository]) -> URL? {
        guard let dot = descriptor.lastIndex(of: ".") else { return nil }
        let repositoryID = String(descriptor[..<dot])
        let name = String(descriptor[descriptor.index(after: dot)...])
        return repositories.first { $0.id == repositoryID }?.bundle(named: name)
    }

    /// What an update did.
    package struct Result: Sendable, Codable, Hashable {
        /// The index came back `304 Not Modified`.
        package var indexNotModified: Bool
        /// Bundles installed, with the version each went to.
        package var updated: [String: Int]
        /// Bundles already at the version the index names.
        package var unchanged: [String]
        /// Bundles whose store rolled back from the version the index names
        /// (``BundleStore/rollBackIfUnconfirmed(allowedLaunches:inForeground:)``): kept until a newer one is published.
        package var keptAfterRollback: [String] = []
        /// Bundles the index no longer names, removed.
        package var removed: [String]
        /// Body bytes of archives downloaded.
        package var bytesDownloaded: Int64
        /// HTTP requests sent, retries included.
        package var requests: Int
        /// Body bytes received and thrown away (see ``SyncSummary/bytesWasted``).
        package var bytesWasted: Int64 = 0
        /// Wall-clock time the update took.
        package var seconds: Double

        /// One line for a terminal: what moved and what it cost.
        package var oneLine: String {
            let index = indexNotModified ? "index 304 Not Modified" : "index fetched"
            let list = updated.keys.sorted().map { "\($0) → \(updated[$0]!)" }.joined(separator: ", ")
            let kept = keptAfterRollback.isEmpty ? "" : "\(keptAfterRollback.count) kept after a rollback, "
            return
                "Repository: \(index); \(updated.count) updated\(list.isEmpty ? "" : " (\(list))"), \(unchanged.count) unchanged, \(kept)"
                + "\(removed.count) removed; \(ByteCount(bytesDownloaded)) in \(requests) request\(requests == 1 ? "" : "s")\(wastedNote(bytesWasted))."
        }
    }

    private struct State: Codable {
        var validators: HTTPValidators?
        var index: RepositoryIndex
        /// The accepted index's sequence and expiry, when it was signed.
        var sequence: Int?
        var expires: Date?
    }

    /// Runs one update and returns the repository's own account of it; ``run(reporting:)``
    /// gives the same as every delivery mode does.
    ///
    /// - Parameter progress: the share of changed bundles installed so far, 0…1.
    @discardableResult
    package func update(progress: @escaping @Sendable (_ fraction: Double) -> Void = { _ in }) async throws -> Result {
        try await update(progress: progress, reporting: { _ in })
    }

    private func update(
        progress: @escaping @Sendable (_ fraction: Double) -> Void,
        reporting report: @escaping @Sendable (SyncEvent) -> Void
    ) async throws -> Result {
        try await withDeadline(configuration.deadline, url: source) {
            try await updateNow(progress: progress, report: report)
        }
    }

    private func updateNow(
        progress: @escaping @Sendable (_ fraction: Double) -> Void,
        report: @escaping @Sendable (SyncEvent) -> Void
    ) async throws -> Result {
        let started = ContinuousClock.now
        let fetcher = Fetcher(
            transport: transport,
            configuration: configuration,
            localRoot: source.isFileURL ? source : nil
        )
        try await BlockingPool.run { [stateFolder] in try Disk.createDirectory(stateFolder.path) }
        let lock = try await StoreLock(path: stateFolder.appendingPathComponent("lock").path, timeout: .seconds(60))
        defer { lock.release() }
        // The lock is let go while the update waits on the network; when another update saved
        // a new state meanwhile, this one starts again from that state, up to 3 times in all.
        return try await lock.replanningWhenChanged {
            try await updateOnce(lock: lock, fetcher: fetcher, started: started, progress, report)
        }
    }

    /// One pass of an update under the repository's lock: the index, then the bundles it
    /// changed, then the bundles it dropped, then the state the next update asks from.
    private func updateOnce(
        lock: StoreLock,
        fetcher: Fetcher,
        started: ContinuousClock.Instant,
        _ progress: @escaping @Sendable (_ fraction: Double) -> Void,
        _ report: @escaping @Sendable (SyncEvent) -> Void
    ) async throws -> Result {
        let statePath = stateFolder.appendingPathComponent("state.json").path
        let savedData = try? await BlockingPool.run { try Disk.read(statePath) }
        let pass = UnlockedWait(lock: lock, statePath: statePath, savedData: savedData)
        let (index, validators, notModified) = try await currentIndex(
            saved: savedData.flatMap { try? JSONDecoder().decode(State.self, from: $0) },
            pass: pass,
            fetcher: fetcher,
            report: report
        )
        let plan = try plan(index)
        let bytes = try await pass.run {
            try await installAll(plan.changed, of: index, fetcher: fetcher, progress, report)
        }
        let removed = try await removeDropped(keeping: Set(index.bundles.keys))
        let state = State(
            validators: validators,
            index: index,
            sequence: index.release.sequence,
            expires: index.release.expires
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let stateData = try encoder.encode(state)
        try await BlockingPool.run { try Disk.writeAtomically(stateData, to: statePath) }
        return Result(
            indexNotModified: notModified,
            updated: Dictionary(uniqueKeysWithValues: plan.changed.map { ($0, index.bundles[$0]!.version) }),
            unchanged: index.bundles.keys.filter { !plan.moved.contains($0) }.sorted(),
            keptAfterRollback: plan.kept,
            removed: removed.sorted(),
            bytesDownloaded: bytes,
            requests: fetcher.requests.value,
            bytesWasted: fetcher.ledger.wasted,
            seconds: (ContinuousClock.now - started).seconds
        )
    }

    /// Lets the lock go while waiting on the network; the pass is stale if another update saved
    /// its state meanwhile (and then starts again from that state).
    private struct UnlockedWait {
        var lock: StoreLock
        var statePath: String
        var savedData: Data?

        func run<Value>(_ body: () async throws -> Value) async throws -> Value {
            try await lock.released(while: body, unchanged: { (try? Disk.read(statePath)) == savedData })
        }
    }

    /// The index to install from: fetched and verified, or the saved one on `304` (when not
    /// expired). Raises the high-water mark of a signed one.
    private func currentIndex(
        saved: State?,
        pass: UnlockedWait,
        fetcher: Fetcher,
        report: @escaping @Sendable (SyncEvent) -> Void
    ) async throws -> (RepositoryIndex, HTTPValidators?, notModified: Bool) {
        let indexURL = source.appendingPathComponent(id).appendingPathComponent("index.json")
        let (keys, trustedSaved, answer) = try await pass.run { [configuration, stateFolder] in
            let keys = try await KeyRotation.currentKeys(
                configuration: configuration,
                statePath: stateFolder.appendingPathComponent("keys.json").path,
                fetcher: fetcher
            )
            report(.checking(indexURL))
            // With keys pinned, only a state saved from a verified index counts.
            let trustedSaved = keys != nil && saved?.sequence == nil ? nil : saved
            let answer = try await fetcher.document(
                at: indexURL,
                validators: trustedSaved?.validators,
                limit: configuration.maxDocumentSize
            )
            return (keys, trustedSaved, answer)
        }
        switch answer {
        case .notModified, .notNewer:  // document(at:) answers only the first of these
            try FreshnessCheck.checkStillValid(
                trustedSaved?.expires,
                source: indexURL.absoluteString,
                configuration: configuration
            )
            return (trustedSaved!.index, trustedSaved?.validators, true)
        case .fetched(let data, let newValidators):
            let digest = ContentHash.of(data, using: .sha256).hex
            let index: RepositoryIndex
            do throws(ManifestError) {
                index = try RepositoryIndex(data: data, source: indexURL.absoluteString)
                if let keys {
                    try verify(index, keys: keys, digest: digest, source: indexURL.absoluteString, saved: trustedSaved)
                }
            } catch { throw FreshAirError.manifest(error) }
            // Only a signed sequence outlives its version (FreshnessCheck.recordsMark).
            if let sequence = index.release.sequence, keys != nil {
                try HighWaterMarks(path: highWaterPath).raise(
                    HighWaterMark(sequence: sequence, digest: digest),
                    for: indexURL.absoluteString
                )
            }
            return (index, newValidators, false)
        }
    }

    /// Which bundles the index moves (`moved`), which of those this device rolled back from and
    /// keeps (`kept`), and which to install (`changed`).
    private func plan(_ index: RepositoryIndex) throws -> (moved: [String], kept: [String], changed: [String]) {
        // A bundle that `verify()` found damaged is installed again, whatever its version.
        let moved = index.bundles.keys.sorted().filter {
            installedVersion(of: $0) != index.bundles[$0]!.version || store(forBundle: $0).liveVersionIsDamaged
        }
        // An archive URL names one version: one rolled back from is not installed again.
        let kept = try moved.filter { name in
            let store = store(forBundle: name)
            return try archiveURLs(name, version: index.bundles[name]!.version).contains {
                try store.rejected(from: $0.url.absoluteString) != nil
            }
        }
        return (moved, kept, moved.filter { !kept.contains($0) })
    }

    /// Installs each changed bundle, `concurrency` at a time; returns the bytes downloaded.
    private func installAll(
        _ changed: [String],
        of index: RepositoryIndex,
        fetcher: Fetcher,
        _ progress: @escaping @Sendable (_ fraction: Double) -> Void,
        _ report: @escaping @Sendable (SyncEvent) -> Void
    ) async throws -> Int64 {
        // Bytes as they arrive, for every mode's progress events; expected when the index lists sizes.
        let sizes = changed.compactMap { index.bundles[$0]?.size }
        let counter = ProgressCounter(
            filesTotal: changed.count,
            bytesExpected: sizes.count == changed.count ? sizes.reduce(0, +) : nil,
            report: report
        )
        var bytes: Int64 = 0
        let work = changed.map { ($0, index.bundles[$0]!) }
        try await forEachConcurrently(work, width: configuration.concurrency) { name, entry in
            let size = try await install(name, entry: entry, fetcher: fetcher) { counter.add(bytes: $0) }
            // The share of changed bundles installed, for `update(progress:)`.
            progress(Double(counter.completeFiles(1)) / Double(changed.count))
            report(.downloaded(path: name, bytes: size))
            return size
        } take: { size in
            bytes += size
        }
        return bytes
    }

    /// Removes the bundles the index no longer lists, and links a whole-repository snapshot;
    /// returns the names removed.
    private func removeDropped(keeping names: Set<String>) async throws -> [String] {
        try await BlockingPool.run { [self] in
            var removed: [String] = []
            let bundlesFolder = stateFolder.appendingPathComponent("bundles").path
            for name in Disk.contentsOfDirectory(bundlesFolder) where !names.contains(name) {
                if switching == .perBundle { try Disk.remove(directory.appendingPathComponent(name).path) }
                try Disk.remove(bundlesFolder + "/" + name)
                removed.append(name)
            }
            if switching == .wholeRepository {
                try RepositorySnapshot(repository: self).switchIfStale(names: names.sorted())
            }
            return removed
        }
    }

    var highWaterPath: String { stateFolder.appendingPathComponent("high-water.json").path }

    /// With keys pinned: signed by one of them, for this repository, not older than what was
    /// accepted, not expired, and every bundle's archive named by digest and size.
    private func verify(
        _ index: RepositoryIndex,
        keys: KeySet,
        digest: String,
        source: String,
        saved: State?
    ) throws(ManifestError) {
        try index.release.verify(keys, source: source)
        let mark: HighWaterMark?
        do { mark = try HighWaterMarks(path: highWaterPath).mark(for: source) } catch {
            throw ManifestError(source: source, problem: .unexpectedShape("\(error)"))
        }
        try FreshnessCheck(source: source, configuration: configuration, defaultIdentity: id)
            .check(index.release.offered(digest: digest), mark: mark, liveSequence: saved?.sequence)
        for (name, bundle) in index.bundles.sorted(by: { $0.key < $1.key })
        where bundle.sha256.flatMap(ContentHash.init(hex:)) == nil || bundle.size == nil {
            throw ManifestError(
                source: source,
                problem: .unexpectedShape(
                    "bundle \"\(name)\" has no archive \"sha256\" and \"size\", which a signed index needs; publish the index with each archive's digest and size"
                )
            )
        }
    }

    /// Downloads `<name>-<version>.tar.gz` (falling back to `.tar` unless the index is signed,
    /// which names the `.tar.gz`'s digest) and makes it the bundle's live version.
    private func install(
        _ name: String,
        entry: RepositoryIndex.Bundle,
        fetcher: Fetcher,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> Int64 {
        let store = store(forBundle: name)
        let version = entry.version
        let signed = configuration.pinsKeys ? entry.sha256.flatMap(ContentHash.init(hex:)) : nil
        return try await store.update { update in
            var lastError: (any Error)?
            for (format, url) in archiveURLs(name, version: version).prefix(signed == nil ? 2 : 1) {
                let fileName = url.lastPathComponent
                var job = DownloadJob(
                    label: "\(id)/\(fileName)",
                    url: url,
                    partialPath: update.partialsPath + "/\(fileName)",
                    expectedHash: signed,
                    expectedSize: signed == nil ? nil : entry.size,
                    limit: configuration.sizeCap(declared: signed != nil),
                    validators: nil
                )
                job.isTransient = true
                let file: DownloadedFile
                do {
                    let outcome = try await update.withoutLock { try await fetcher.download(job, progress: progress) }
                    guard case .fetched(let fetched, _) = outcome else { continue }
                    file = fetched
                } catch let error as FreshAirError where error.status == 404 {
                    lastError = error
                    continue
                }
                try await update.assemble { staged in
                    // The archive is not kept: gone before activation flushes the disk.
                    defer { try? Disk.remove(file.path) }
                    let installer = ExtractingInstaller(
                        limits: configuration.extraction,
                        topLevelFolderToStrip: "\(name)-\(version)"
                    )
                    let records = try await installer.install(
                        package: URL(fileURLWithPath: file.path),
                        from: url.absoluteString,
                        format: format,
                        into: staged.path
                    )
                    var record = VersionRecord(id: staged.id, source: url.absoluteString, files: records)
                    record.bundleVersion = version
                    record.repository = id
                    return record
                }
                return file.size
            }
            throw lastError ?? FreshAirError.httpStatus(404, url: archiveURLs(name, version: version)[0].url)
        }
    }

    /// Where one version of a bundle may be: `<name>-<version>.tar.gz`, else `.tar`.
    private func archiveURLs(_ name: String, version: Int) -> [(format: ArchiveFormat, url: URL)] {
        let base = (cdn ?? source).appendingPathComponent(id)
        return [
            (.tarGzip, base.appendingPathComponent("\(name)-\(version).tar.gz")),
            (.tar, base.appendingPathComponent("\(name)-\(version).tar")),
        ]
    }
}

extension Repository: ContentUpdater {
    /// Runs one update, reporting it as every delivery mode does: the repository's bundles are
    /// the files, and ``SyncSummary/repository`` holds `Result`.
    @discardableResult
    public func run(reporting report: @escaping @Sendable (SyncEvent) -> Void) async throws -> SyncSummary {
        let result = try await update(progress: { _ in }, reporting: report)
        if result.indexNotModified { report(.notModified) }
        let summary = SyncSummary(result)
        report(.finished(summary))
        return summary
    }
}
