import Foundation
import Synchronization

/// Keeps a local copy of a remote `.freshair` bundle current.
///
/// ```swift
/// let sync = BundleSync(
///     remote: URL(string: "https://cdn.example.com/App.freshair/")!,
///     store: BundleStore(root: appSupport.appendingPathComponent("App.freshair-store")),
///     environment: .current(appVersion: "2.1"))
/// let summary = try await sync.run()
/// let notes = sync.store.liveDirectory?.appendingPathComponent("release_notes.json")
/// ```
///
/// One run: the root `manifest.json` is fetched conditionally (a `304` with nothing else to
/// do costs exactly one request); the tree of child manifests is walked and every condition
/// evaluated; only files whose digest changed are downloaded, concurrently, streamed to
/// disk and verified; then the new version goes live atomically. Any failure leaves the
/// live version untouched, and an interrupted download resumes on the next run.
public struct BundleSync: Sendable {
    /// The bundle folder (`…/App.freshair/`) or its `manifest.json`.
    public let remote: URL
    public var store: BundleStore
    /// What conditions are evaluated against. Change it (an app upgrade, a new locale) and
    /// the next run re-plans from the stored manifests.
    public var environment: ConditionEnvironment
    public var configuration: SyncConfiguration
    private let transport: any HTTPTransport

    /// - Parameter transport: how requests are sent; by default a ``URLSessionTransport`` of
    ///   this value's own, with ``SyncConfiguration/concurrency`` connections per host. Pass
    ///   one to share its connections (and its lifetime is then yours).
    public init(
        remote: URL,
        store: BundleStore,
        environment: ConditionEnvironment = .current(),
        transport: (any HTTPTransport)? = nil,
        configuration: SyncConfiguration = SyncConfiguration()
    ) {
        self.remote = remote
        self.store = store
        self.environment = environment
        self.transport = transport ?? URLSessionTransport(connectionsPerHost: configuration.concurrency)
        self.configuration = configuration
    }

    /// The bundle folder's URL, ending in `/`.
    var baseURL: URL {
        var base = remote
        if base.lastPathComponent == "manifest.json" { base.deleteLastPathComponent() }
        return base.absoluteString.hasSuffix("/") ? base : URL(string: base.absoluteString + "/")!
    }

    /// Runs one sync and returns what it did.
    @discardableResult
    public func run() async throws -> SyncSummary {
        try await run(reporting: { _ in })
    }

    /// Runs one sync, delivering its events as they happen; the last is
    /// ``SyncEvent/finished(_:)``. Ending the iteration early cancels the sync.
    public func updates() -> AsyncThrowingStream<SyncEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    try await run(reporting: { continuation.yield($0) })
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Runs one sync, calling `report` with each event as it happens, on whichever task
    /// the sync is running then: keep it quick and thread-safe. Unlike ``updates()``, no task
    /// wakes up per event, which matters when thousands of files arrive per second.
    @discardableResult
    public func run(reporting report: @escaping @Sendable (SyncEvent) -> Void) async throws -> SyncSummary {
        let started = ContinuousClock.now
        let fetcher = Fetcher(transport: transport, configuration: configuration)
        var resolved = self
        if environment[RolloutBucket.key] == nil {
            let bucket = RolloutBucket.of(installID: try store.installID(), bundle: baseURL.absoluteString)
            resolved.environment[RolloutBucket.key] = .number(String(bucket))
        }
        let sync = resolved
        let summary = try await withDeadline(configuration.deadline, url: baseURL) {
            try await sync.store.update { update in
                try await sync.sync(update: &update, fetcher: fetcher, report: report)
            }
        }
        var finished = summary
        finished.requests = fetcher.requests.value
        finished.bytesWasted = fetcher.ledger.wasted
        finished.seconds = (ContinuousClock.now - started).seconds
        report(.finished(finished))
        return finished
    }

    private func sync(
        update: inout StoreUpdate,
        fetcher: Fetcher,
        report: @escaping @Sendable (SyncEvent) -> Void
    ) async throws -> SyncSummary {
        let manifestURL = baseURL.appendingPathComponent("manifest.json")
        // The live version is only a starting point if it came from this bundle.
        let live = update.live?.source == baseURL.absoluteString ? update.live : nil
        let liveDirectory = live == nil ? nil : update.liveDirectory
        let liveRootPath = liveDirectory.map { $0 + "/manifest.json" }
        // Files `verify()` found damaged are fetched again; the stored root is not trusted then.
        let damaged = store.damagedPaths(of: live?.id)
        let hasLiveRoot = damaged.isEmpty && (liveRootPath.map(Disk.exists) ?? false)
        // After a rollback, ask whether the server still has what was rolled back from.
        let rejected = live == nil ? nil : try store.rejected(from: baseURL.absoluteString)
        let keptAfterRollback = SyncSummary.nothingInstalled(
            .keptAfterRollback,
            version: live?.id,
            notModified: true,
            reused: live?.files.count ?? 0
        )

        // The keys to verify with, after any rotation the publisher announced.
        let keys = try await KeyRotation.currentKeys(
            configuration: configuration,
            statePath: store.keyDocumentPath,
            fetcher: fetcher
        )
        let fingerprint = planFingerprint(keys: keys)
        report(.checking(manifestURL))
        let rootData: Data
        let validators: HTTPValidators?
        let notModified: Bool
        switch try await fetcher.document(
            at: manifestURL,
            validators: hasLiveRoot ? rejected?.validators ?? live?.validators : nil,
            limit: configuration.maxDocumentSize
        )
        {
        case .notModified, .notNewer:  // document(at:) answers only the first of these
            report(.notModified)
            if rejected?.validators != nil { return keptAfterRollback }
            if let live,
                let current = try Self.unchanged(
                    live,
                    plannedFor: fingerprint,
                    source: manifestURL.absoluteString,
                    clockSkew: configuration.clockSkewTolerance
                )
            {
                return current
            }
            (rootData, validators, notModified) = (try Disk.read(liveRootPath!), live?.validators, true)
        case .fetched(let data, let newValidators):
            (rootData, validators, notModified) = (data, newValidators, false)
            if let digest = rejected?.rootDigest, ContentHash.of(data, using: .sha256).hex == digest {
                var kept = keptAfterRollback  // a server without validators, still offering the rejected manifest
                kept.notModified = false
                return kept
            }
        }

        // Identity, sequence and expiry, checked on the root before any child is fetched; the
        // high-water mark rises as soon as the root passes.
        let rootDigest = ContentHash.of(rootData, using: .sha256).hex
        let freshness = FreshnessCheck(
            source: manifestURL.absoluteString,
            configuration: configuration,
            defaultIdentity: baseURL.lastPathComponent
        )
        let mark = try store.highWaterMarks.mark(for: baseURL.absoluteString)
        let liveSequence = live?.metadata[RecordKey.sequence].flatMap { Int($0) }
        var walker = manifestTree(fetcher: fetcher, live: live, liveDirectory: liveDirectory, keys: keys)
        walker.acceptRoot = { root in
            do throws(ManifestError) {
                try freshness.check(
                    .init(identity: root.identity, sequence: root.sequence, expires: root.expires, digest: rootDigest),
                    mark: mark,
                    liveSequence: liveSequence
                )
            } catch { throw FreshAirError.manifest(error) }
        }
        let tree = try await walker.select(root: rootData, fetched: !notModified)
        if let sequence = tree.sequence {
            try store.highWaterMarks.raise(
                HighWaterMark(sequence: sequence, digest: rootDigest),
                for: baseURL.absoluteString
            )
        }
        let metadata = recordMetadata(tree, fingerprint: fingerprint)
        let selected = tree.files
        let plan = SyncPlanner.plan(selected: selected, live: live) { path, record in
            !damaged.contains(path) && Disk.status(liveDirectory! + "/" + path)?.size == record.size
        }
        report(.planned(plan.summary))

        let keptCount = plan.actions.count(where: { if case .keep = $0.action { true } else { false } })
        var summary = SyncSummary.nothingInstalled(
            .alreadyCurrent,
            version: live?.id,
            notModified: notModified,
            reused: keptCount
        )
        if plan.changesNothing, damaged.isEmpty {
            if var record = live {
                // Same content under new validators, sequence or environment (a re-upload, an
                // app upgrade that changed nothing here): remember them, so the next 304 is final.
                // The store's own keys (confirmation) stay as they are.
                var updated = record.metadata
                for key in RecordKey.all { updated[key] = metadata[key] }
                if record.validators != validators || record.metadata != updated {
                    record.validators = validators
                    record.metadata = updated
                    try update.writeRecord(record)
                }
            }
            return summary
        }

        var downloaded: (records: [String: FileRecord], order: [String], bytes: Int64, reused: Int) = ([:], [], 0, 0)
        let activated = try await update.assemble { staged in
            downloaded = try await install(
                plan,
                into: &staged,
                liveDirectory: liveDirectory,
                fetcher: fetcher,
                report: report
            )
            var files: [String: FileRecord] = [:]
            for (file, action) in plan.actions {
                switch action {
                case .keep(let record), .write(_, let record): files[file.path.string] = record
                case .download: files[file.path.string] = downloaded.records[file.path.string]
                }
            }
            return VersionRecord(
                id: staged.id,
                source: baseURL.absoluteString,
                validators: validators,
                files: files,
                metadata: metadata
            )
        }
        let version = activated?.id
        if let version { report(.activated(version: version)) }
        summary.outcome = .updated
        summary.version = version
        // Manifests fetched this time count as downloads too: they crossed the network.
        let fetchedDocuments = plan.actions.compactMap { item -> SelectedFile? in
            if case .write = item.action, item.file.fetched { item.file } else { nil }
        }
        summary.downloaded = fetchedDocuments.map(\.path.string) + downloaded.order
        summary.filesDownloaded = summary.downloaded.count
        summary.bytesDownloaded = downloaded.bytes + fetchedDocuments.reduce(0) { $0 + Int64($1.contents?.count ?? 0) }
        summary.filesReused += downloaded.reused  // from an update that was killed or failed
        summary.filesRemoved = plan.removed.count
        summary.removed = plan.removed
        return summary
    }

    /// The record's metadata for a selection: what a later `304` needs to be answered
    /// without reading a manifest (the environment it was planned for, sequence, expiry).
    private func recordMetadata(_ tree: ManifestTree.Selection, fingerprint: String) -> [String: String] {
        var metadata = [RecordKey.environment: fingerprint]
        if let sequence = tree.sequence { metadata[RecordKey.sequence] = String(sequence) }
        if let expires = tree.expires { metadata[RecordKey.expires] = String(expires.timeIntervalSince1970) }
        return metadata
    }

    /// What a plan depends on besides the manifests: the environment and the keys the
    /// manifests were checked against.
    func planFingerprint(keys: KeySet?) -> String { Self.planFingerprint(environment: environment, keys: keys) }

    static func planFingerprint(environment: ConditionEnvironment, keys: KeySet?) -> String {
        guard let keys, !keys.keys.isEmpty else { return environment.fingerprint }
        var text = keys.keys.map(\.base64).sorted().joined(separator: ",")
        if keys.threshold > 1 { text += "/\(keys.threshold)" }
        return ContentHash.of(Array("\(environment.fingerprint) \(text)".utf8), using: .sha256).hex
    }

    /// The answer to a `304` when the live version was planned for this very environment (and
    /// checked against the same keys): the stored manifests would select the same files
    /// again, so there is nothing to plan, read or compare (a no-change check on 10,000 files
    /// costs one request, not a walk of the tree). `nil` when either changed, or the record
    /// predates fingerprints: re-plan.
    static func unchanged(
        _ live: VersionRecord,
        plannedFor fingerprint: String,
        source: String,
        clockSkew: Duration = .zero
    ) throws -> SyncSummary? {
        guard live.metadata[RecordKey.environment] == fingerprint else { return nil }
        if let expires = live.metadata[RecordKey.expires].flatMap(Double.init).map(Date.init(timeIntervalSince1970:)) {
            try FreshnessCheck.checkExpiryOrThrow(expires, source: source, clockSkew: clockSkew)
        }
        return .nothingInstalled(.alreadyCurrent, version: live.id, notModified: true, reused: live.files.count)
    }

    /// Keys of ``VersionRecord/metadata`` a bundle sync keeps.
    enum RecordKey {
        static let sequence = "sequence"
        static let expires = "expires"
        static let environment = "environment"
        static let all = [sequence, expires, environment]
    }

    /// The tree walker for this bundle: a child manifest comes from the live version when its
    /// parent lists the digest the live copy was verified to have (so an unchanged tree costs
    /// no request beyond the root), else from the server, checked against that digest.
    private func manifestTree(
        fetcher: Fetcher,
        live: VersionRecord?,
        liveDirectory: String?,
        keys: KeySet?
    ) -> ManifestTree {
        let baseURL = baseURL
        let limit = configuration.maxDocumentSize
        var tree = ManifestTree(baseURL: baseURL, environment: environment, maxDepth: configuration.maxManifestDepth) {
            path,
            hash in
            if let hash, let record = live?.files[path.string], record.hash == hash, let liveDirectory,
                let data = FileManager.default.contents(atPath: liveDirectory + "/" + path.string),
                ContentHash.of(data, using: hash.algorithm) == hash
            {
                return (data, false)
            }
            let childURL = path.url(relativeTo: baseURL)
            guard case .fetched(let data, _) = try await fetcher.document(at: childURL, validators: nil, limit: limit)
            else {
                throw FreshAirError.httpStatus(304, url: childURL)
            }
            if let hash {
                let actual = ContentHash.of(data, using: hash.algorithm)
                guard actual == hash else {
                    throw FreshAirError.hashMismatch(path: path.string, url: childURL, expected: hash, actual: actual)
                }
            }
            return (data, true)
        }
        tree.concurrency = configuration.concurrency
        tree.keys = keys
        tree.maxTotalBytes = configuration.maxManifestTreeSize
        return tree
    }

    /// The files this environment selects from the remote bundle, manifests included, as a
    /// device with nothing installed would download them. Touches no store.
    public func selection() async throws -> [SelectedEntry] {
        let fetcher = Fetcher(transport: transport, configuration: configuration)
        let manifestURL = baseURL.appendingPathComponent("manifest.json")
        guard
            case .fetched(let root, _) = try await fetcher.document(
                at: manifestURL,
                validators: nil,
                limit: configuration.maxDocumentSize
            )
        else {
            throw FreshAirError.httpStatus(304, url: manifestURL)
        }
        let keys = try await KeyRotation.currentKeys(configuration: configuration, statePath: nil, fetcher: fetcher)
        let selected = try await manifestTree(fetcher: fetcher, live: nil, liveDirectory: nil, keys: keys).select(
            root: root,
            fetched: true
        ).files
        return selected.map { SelectedEntry(path: $0.path.string, size: $0.size, hash: $0.hash?.hex) }
    }

    /// Fills the staged tree: links kept files, writes manifests, downloads the rest with
    /// bounded concurrency. Identical content listed at several paths is fetched once.
    private func install(
        _ plan: SyncPlan,
        into staged: inout StagedVersion,
        liveDirectory: String?,
        fetcher: Fetcher,
        report: @escaping @Sendable (SyncEvent) -> Void
    ) async throws -> (records: [String: FileRecord], order: [String], bytes: Int64, reused: Int) {
        // Unchanged files are linked from the live version, manifests written: thousands of
        // system calls, made on the blocking pool.
        let carried = plan.actions.filter {
            if case .download = $0.action { false } else { true }
        }
        try await BlockingPool.run { [staged] in
            for (file, action) in carried {
                switch action {
                case .keep: try staged.link(liveDirectory! + "/" + file.path.string, at: file.path)
                case .write(let data, _): try staged.write(data, at: file.path)
                case .download: break
                }
            }
        }

        // One job per distinct content; its other paths are linked to the first.
        var jobs: [(job: DownloadJob, paths: [BundlePath])] = []
        var jobIndex: [ContentHash: Int] = [:]
        var records: [String: FileRecord] = [:]
        let interrupted = store.interruptedFolders()
        for file in plan.downloads {
            if let hash = file.hash, let index = jobIndex[hash] {
                jobs[index].paths.append(file.path)
                continue
            }
            // Already downloaded and verified by an update that was killed or failed.
            if !interrupted.isEmpty, let hash = file.hash, let size = file.size,
                let copy = store.interruptedCopy(of: file.path, hash: hash, size: size, in: interrupted)
            {
                try staged.link(copy, at: file.path)
                records[file.path.string] = FileRecord(hash: hash, size: size)
                continue
            }
            // A small file goes straight to its place in the staged tree: one create in its own
            // folder instead of a create, a rename and side-file checks in one shared folder.
            let small = (file.size ?? .max) < Fetcher.resumableSize
            let partialPath: String
            if small {
                partialPath = staged.path + "/" + file.path.string
            } else {
                let key = (file.hash ?? ContentHash.of(Array(file.path.string.utf8), using: .sha256)).hex
                partialPath = store.partialsPath + "/" + key
            }
            let job = DownloadJob(
                label: file.path.string,
                url: file.path.url(relativeTo: baseURL),
                partialPath: partialPath,
                expectedHash: file.hash,
                expectedSize: file.size,
                limit: configuration.sizeCap(declared: file.size != nil),
                validators: nil,
                resumable: !small,
                confined: small ? ConfinedTarget(folder: staged.folder, path: file.path) : nil
            )
            if let hash = file.hash { jobIndex[hash] = jobs.count }
            jobs.append((job, [file.path]))
        }

        let summary = plan.summary
        let progress = ProgressCounter(
            filesTotal: summary.filesToDownload,
            bytesExpected: summary.bytesToDownload,
            report: report
        )
        let reused = records.count
        progress.completeFiles(reused)
        var order: [String] = []
        var bytes: Int64 = 0
        try await withThrowingTaskGroup(of: (Int, DownloadedFile).self) { group in
            var next = 0
            func startNext() {
                guard next < jobs.count else { return }
                let index = next
                let job = jobs[index].job
                next += 1
                group.addTask {
                    guard
                        case .fetched(let file, _) = try await fetcher.download(
                            job,
                            progress: { progress.add(bytes: $0) }
                        )
                    else {
                        throw FreshAirError.httpStatus(304, url: job.url)
                    }
                    return (index, file)
                }
            }
            for _ in 0..<max(1, configuration.concurrency) { startNext() }
            while let (index, file) = try await group.next() {
                let paths = jobs[index].paths
                try staged.place(file.path, at: paths[0])
                for extra in paths.dropFirst() { try staged.duplicate(paths[0], at: extra) }
                for path in paths {
                    // Every bundle file is hashed as it arrives (only transient packages are not).
                    if let hash = file.hash { records[path.string] = FileRecord(hash: hash, size: file.size) }
                    order.append(path.string)
                    report(.downloaded(path: path.string, bytes: file.size))
                }
                bytes += file.size
                progress.completeFiles(paths.count)
                startNext()
            }
        }
        return (records, order, bytes, reused)
    }
}

/// Aggregates byte and file progress from concurrent downloads into throttled events.
private final class ProgressCounter: Sendable {
    private struct State {
        var files = 0
        var bytes: Int64 = 0
        var lastReport = ContinuousClock.now
    }

    private let state = Mutex(State())
    private let filesTotal: Int
    private let bytesExpected: Int64?
    private let report: @Sendable (SyncEvent) -> Void

    init(filesTotal: Int, bytesExpected: Int64?, report: @escaping @Sendable (SyncEvent) -> Void) {
        self.filesTotal = filesTotal
        self.bytesExpected = bytesExpected
        self.report = report
    }

    func add(bytes: Int64) { emit(force: false) { $0.bytes += bytes } }
    func completeFiles(_ count: Int) {
        emit(force: false) { $0.files += count }
        if state.withLock({ $0.files == filesTotal }) { emit(force: true) { _ in } }
    }

    private func emit(force: Bool, _ change: (inout State) -> Void) {
        let event: SyncProgress? = state.withLock { state in
            change(&state)
            let now = ContinuousClock.now
            guard force || now - state.lastReport > .milliseconds(100) else { return nil }
            state.lastReport = now
            return SyncProgress(
                filesCompleted: state.files,
                filesTotal: filesTotal,
                bytesReceived: state.bytes,
                bytesExpected: bytesExpected
            )
        }
        if let event { report(.progress(event)) }
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
