public import Foundation
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
public struct BundleSync: ContentUpdater {
    /// The bundle folder (`…/App.freshair/`) or its `manifest.json`.
    public let remote: URL
    /// Where versions are kept, and the live link.
    public var store: BundleStore
    /// What conditions are evaluated against. Change it (an app upgrade, a new locale) and
    /// the next run re-plans from the stored manifests.
    public var environment: ConditionEnvironment
    /// Retries, limits, keys and timeouts.
    public var configuration: SyncConfiguration
    let transport: any HTTPTransport

    /// Creates a sync; nothing happens until ``run()``.
    ///
    /// - Parameters:
    ///   - remote: the bundle folder (`…/App.freshair/`) or its `manifest.json`.
    ///   - store: where versions are kept, and the live link.
    ///   - environment: what conditions are evaluated against.
    ///   - transport: how requests are sent; by default a `URLSession` of this value's own,
    ///     with ``SyncConfiguration/concurrency`` connections per host. Pass one to share its
    ///     connections.
    ///   - configuration: retries, limits, keys and timeouts.
    public init(
        remote: URL,
        store: BundleStore,
        environment: ConditionEnvironment = .current(),
        transport: Transport? = nil,
        configuration: SyncConfiguration = SyncConfiguration()
    ) {
        let base: (any HTTPTransport)? = transport?.base
        self.init(remote: remote, store: store, environment: environment, transport: base, configuration: configuration)
    }

    /// The same, with any `HTTPTransport` (a test's, AsyncHTTPClient's).
    package init(
        remote: URL,
        store: BundleStore,
        environment: ConditionEnvironment = .current(),
        transport: (any HTTPTransport)?,
        configuration: SyncConfiguration = SyncConfiguration()
    ) {
        self.remote = remote
        baseURL = Self.baseURL(of: remote)
        self.store = store
        self.environment = environment
        self.transport = transport ?? Transport.platformDefault(connectionsPerHost: configuration.concurrency)
        self.configuration = configuration
    }

    /// The bundle folder's URL, ending in `/`: made once, as every file's URL starts from it.
    let baseURL: URL

    private static func baseURL(of remote: URL) -> URL {
        var base = remote
        if base.lastPathComponent == "manifest.json" { base.deleteLastPathComponent() }
        return base.absoluteString.hasSuffix("/") ? base : URL(string: base.absoluteString + "/")!
    }

    /// For a `file://` bundle, the folder that holds it: a link may not lead out of it (the
    /// objects of the object layout may be beside the bundle, in `../objects/`).
    var localRoot: URL? { baseURL.isFileURL ? baseURL.deletingLastPathComponent() : nil }

    /// Runs one sync, calling `report` with each event as it happens, on whichever task
    /// the sync is running then: keep it quick and thread-safe. Unlike
    /// ``ContentUpdater/updates()``, no task wakes up per event, which matters when thousands
    /// of files arrive per second.
    @discardableResult
    public func run(reporting report: @escaping @Sendable (SyncEvent) -> Void) async throws -> SyncSummary {
        try await DeliveryRun.perform(self, report: report)
    }

    /// What the store holds for this bundle as a sync begins.
    private struct LocalState {
        /// Any live version: a base to reuse files from, matched by digest (the bundled copy an
        /// app installed first, say).
        var base: VersionRecord?
        var liveDirectory: String?
        /// The live version when it came from this bundle: only then do its validators,
        /// sequence and rollback history count.
        var live: VersionRecord?
        var liveRootPath: String?
        /// Files `verify()` found damaged: fetched again, and the stored root is not trusted then.
        var damaged: Set<String>
        var hasLiveRoot: Bool
        /// What was rolled back from, while the server may still offer it.
        var rejected: BundleStore.RejectedContent?

        var keptAfterRollback: SyncSummary {
            .nothingInstalled(.keptAfterRollback, version: live?.id, notModified: true, reused: live?.fileCount ?? 0)
        }
    }

    /// The root manifest this sync goes on with, and what it was checked against.
    private struct CheckedRoot {
        var keys: KeySet?
        var fingerprint: String
        /// A large root fetched now is in the update's partials already.
        var document: FetchedDocument
        var validators: HTTPValidators?
        var notModified: Bool
    }

    /// One sync with the store's lock taken: the local state, the root, the plan, the install.
    private func sync(update: inout StoreUpdate, run: DeliveryRun) async throws -> SyncSummary {
        let (fetcher, report) = (run.fetcher, run.report)
        let state = try await localState(of: update)
        var root: CheckedRoot
        switch try await checkRoot(state, update: update, run: run) {
        case .finished(let summary): return summary
        case .goOn(let checked): root = checked
        }
        // The walk takes the root's bytes from here, and lets go of them once parsed when they are
        // spilled; the plan's documents hold the other manifests' bytes, until written.
        let rootDocument = Handover(root.document)
        root.document = .inMemory(Data())
        let (tree, plan, documents) = try await planFrom(root, rootDocument, state, update: update, fetcher: fetcher)
        report(.planned(plan.summary))

        let keptCount = plan.kept.count
        let summary = SyncSummary.nothingInstalled(
            .alreadyCurrent,
            version: state.live?.id,
            notModified: root.notModified,
            reused: keptCount
        )
        // From another source, even identical content becomes a version of its own: its record
        // names this bundle and its validators, so the next check is one conditional request.
        if plan.changesNothing, state.damaged.isEmpty, state.live != nil || state.base == nil {
            if let record = state.live {
                // Same content under new validators, sequence or environment (a re-upload, an
                // app upgrade that changed nothing here): remember them, so the next 304 is final.
                // The store's own facts (confirmation) stay as they are.
                var updated = record
                updated.validators = root.validators
                Self.record(tree, plannedFor: root.fingerprint, in: &updated)
                if updated != record { try await update.persist(updated) }
            }
            return summary
        }
        return try await installing(
            plan,
            documents,
            tree,
            root,
            state,
            summary,
            update: &update,
            fetcher: fetcher,
            report: report
        )
    }

    /// The store's own small files, read off the cooperative pool in one hop.
    private func localState(of update: StoreUpdate) async throws -> LocalState {
        let base = update.live
        let liveDirectory = base == nil ? nil : update.liveDirectory
        let live = base?.source == baseURL.absoluteString ? base : nil
        let liveRootPath = liveDirectory.map { $0 + "/manifest.json" }
        return try await BlockingPool.run { [store, baseURL] in
            let damaged = store.damagedPaths(of: base?.id)
            return LocalState(
                base: base,
                liveDirectory: liveDirectory,
                live: live,
                liveRootPath: liveRootPath,
                damaged: damaged,
                hasLiveRoot: damaged.isEmpty && (liveRootPath.map(Disk.exists) ?? false),
                rejected: live == nil ? nil : try store.rejected(from: baseURL.absoluteString)
            )
        }
    }

    private enum RootCheck {
        /// Nothing more to do: a 304 for a version planned for this environment, or the
        /// content rolled back from offered again.
        case finished(SyncSummary)
        case goOn(CheckedRoot)
    }

    /// The keys to verify with, after any rotation the publisher announced, and the root
    /// manifest, asked for with the live version's validators: network waits, without the lock.
    private func checkRoot(_ state: LocalState, update: StoreUpdate, run: DeliveryRun) async throws -> RootCheck {
        let manifestURL = baseURL.appendingPathComponent("manifest.json")
        let (keys, answer) = try await run.keysAndRoot(
            update,
            url: manifestURL,
            validators: state.hasLiveRoot
                ? BundleStore.RejectedContent.validatorsToAsk(rejected: state.rejected, live: state.live?.validators)
                : nil,
            limit: configuration.maxDocumentSize,
            spill: DocumentSpill(
                path: update.partialsPath + "/root.manifest.json",
                from: configuration.spillDocumentsFrom
            )
        )
        let fingerprint = planFingerprint(keys: keys)
        switch answer {
        case .notModified:
            run.report(.notModified)
            if BundleStore.RejectedContent.keepsRollback(state.rejected, after: .notModified) {
                return .finished(state.keptAfterRollback)
            }
            if let live = state.live,
                let current = try Self.unchanged(
                    live,
                    plannedFor: fingerprint,
                    source: manifestURL.absoluteString,
                    clockSkew: configuration.clockSkewTolerance,
                    now: configuration.environment.now()
                )
            {
                return .finished(current)
            }
            let stored = try await BlockingPool.run { [path = state.liveRootPath!] in try Disk.read(path) }
            return .goOn(
                CheckedRoot(
                    keys: keys,
                    fingerprint: fingerprint,
                    document: .inMemory(stored),
                    validators: state.live?.validators,
                    notModified: true
                )
            )
        case .fetched(let document, let validators):
            if BundleStore.RejectedContent.keepsRollback(state.rejected, after: .document(sha256: document.sha256.hex))
            {
                document.discard()
                var kept = state.keptAfterRollback  // a server without validators, still offering the rejected manifest
                kept.notModified = false
                return .finished(kept)
            }
            return .goOn(
                CheckedRoot(
                    keys: keys,
                    fingerprint: fingerprint,
                    document: document,
                    validators: validators,
                    notModified: false
                )
            )
        }
    }

    /// Checks the root's identity, sequence and expiry before any child is fetched, walks the
    /// tree (without the lock), raises the high-water mark and plans from digests.
    private func planFrom(
        _ root: CheckedRoot,
        _ rootDocument: Handover<FetchedDocument>,
        _ state: LocalState,
        update: StoreUpdate,
        fetcher: Fetcher
    ) async throws -> (ManifestTree.Selection, SyncPlan, documents: Handover<[(path: BundlePath, data: Data)]>) {
        let document = rootDocument.take()
        let digest = document.sha256
        let rootDigest = digest.hex
        var spilled: String?
        if case .spilled(let path, _, _) = document { spilled = path }
        // A walk or plan that fails leaves no spilled root behind, nor one the plan keeps.
        var placesSpilled = false
        defer { if !placesSpilled { document.discard() } }
        // A spilled root is read from its file, mapped, and its pages let go behind the reader:
        // the walk holds a window of it, not 14 MB at 100,000 entries.
        let mapped = spilled.flatMap(MappedFile.init(path:))
        let walkBytes = Handover(try mapped?.data ?? document.bytes())
        let acceptance = RootAcceptance(
            document: baseURL.appendingPathComponent("manifest.json"),
            source: baseURL.absoluteString,
            marks: store.highWaterMarks,
            configuration: configuration,
            defaultIdentity: baseURL.lastPathComponent
        )
        let mark = try await BlockingPool.run { try acceptance.currentMark() }
        let liveSequence = state.live?.sequence
        var walker = manifestTree(
            fetcher: fetcher,
            live: state.base,
            liveDirectory: state.liveDirectory,
            keys: root.keys
        )
        walker.spillFolder = update.partialsPath
        walker.spillAfter = configuration.spillSelectionAfter
        walker.acceptRoot = { manifest in
            try acceptance.check(
                .init(
                    identity: manifest.identity,
                    sequence: manifest.sequence,
                    expires: manifest.expires,
                    digest: rootDigest
                ),
                mark: mark,
                liveSequence: liveSequence
            )
        }
        var tree = try await update.withoutLock {
            let bytes = walkBytes.take()
            return try await walker.select(
                root: consume bytes,
                fetched: !root.notModified,
                spilledAs: spilled == nil ? nil : digest,
                letGo: mapped.map { mapped in { mapped.letGo(before: $0) } }
            )
        }
        var plan = try await plan(&tree, state, spilled: spilled) { sequence in
            try acceptance.raise(sequence: sequence, digest: rootDigest)
        }
        // The manifests' bytes go to the staged folder first and are let go then, not held
        // through the downloads: nothing else reads them once planned.
        let documents = plan.handOverDocuments()
        placesSpilled = !plan.placed.isEmpty
        return (tree, plan, documents)
    }

    /// Plans from the selection, which goes to the plan: its list of files (and the manifests'
    /// bytes) are moved, not copied, so that an install of 100,000 files does not hold each of
    /// them twice. Raising the mark first (`raise`) and checking every live file's size
    /// (thousands of `lstat`s) is disk work: the blocking pool's.
    private func plan(
        _ tree: inout ManifestTree.Selection,
        _ state: LocalState,
        spilled: String?,
        raise: @escaping @Sendable (Int?) throws -> Void
    ) async throws -> SyncPlan {
        let selected = Handover(tree.files)
        let sameAsLive = Handover(tree.sameAsLive)
        let documents = Handover(tree.documents)
        (tree.files, tree.sameAsLive, tree.documents) = ([], [], [:])
        return try await BlockingPool.run {
            [sequence = tree.sequence, base = state.base, damaged = state.damaged, liveDirectory = state.liveDirectory]
            in
            try raise(sequence)
            let onDisk = spilled.map { [BundlePath(trusted: "manifest.json"): $0] } ?? [:]
            let live = liveDirectory.flatMap(FolderWalk.init(path:))
            return SyncPlanner.plan(
                selected: selected.take(),
                sameAsLive: sameAsLive.take(),
                documents: documents.take(),
                live: base,
                onDisk: onDisk
            ) { path, record in
                !damaged.contains(path) && live?.status(of: path)?.size == record.size
            }
        }
    }

    /// Downloads what the plan needs into a staged version (without the lock), makes it live,
    /// and completes `summary`.
    private func installing(
        _ plan: SyncPlan,
        _ documents: Handover<[(path: BundlePath, data: Data)]>,
        _ tree: ManifestTree.Selection,
        _ root: CheckedRoot,
        _ state: LocalState,
        _ summary: SyncSummary,
        update: inout StoreUpdate,
        fetcher: Fetcher,
        report: @escaping @Sendable (SyncEvent) -> Void
    ) async throws -> SyncSummary {
        var downloaded = Landed(downloads: 0)
        let (lock, liveID) = (update.lock, update.live?.id)
        // Before the staged folder is made: on a disk a failed download filled, even that fails.
        await Self.dropUnneededPartials(of: plan.downloads, in: update.partialsPath)
        let activated = try await update.assemble { staged in
            downloaded = try await StoreUpdate.withoutLock(lock, store: store, liveID: liveID) {
                try await install(
                    plan,
                    documents: documents,
                    layout: tree.layout,
                    pack: tree.pack,
                    into: &staged,
                    live: state.base,
                    liveDirectory: state.liveDirectory,
                    fetcher: fetcher,
                    report: report
                )
            }
            var record = VersionRecord(
                id: staged.id,
                source: baseURL.absoluteString,
                created: configuration.environment.now(),
                validators: root.validators
            )
            record.setFiles(downloaded.listing(of: plan))
            Self.record(tree, plannedFor: root.fingerprint, in: &record)
            return record
        }
        var summary = summary
        let version = activated?.id
        if let version { report(.activated(version: version)) }
        summary.outcome = .updated
        summary.version = version
        // Manifests fetched this time count as downloads too: they crossed the network (a placed
        // one, a spilled root, always did).
        let fetchedDocuments: [(path: String, size: Int64)] =
            plan.placed.map { ($0.file.path.string, $0.record.size) }
            + plan.written.filter(\.fetched).map { ($0.file.path.string, $0.record.size) }
        summary.downloadedPaths = downloaded.downloadedPaths(after: fetchedDocuments.map(\.path), of: plan.downloads)
        summary.filesDownloaded = summary.downloadedPaths.count
        summary.bytesDownloaded = downloaded.bytes + fetchedDocuments.reduce(0) { $0 + $1.size }
        summary.filesReused += downloaded.reused  // from an update that was killed or failed
        summary.bytesSaved = downloaded.saved
        summary.filesFromPack = downloaded.fromPack
        summary.packProblem = downloaded.packProblem
        summary.filesRemoved = plan.removed.count
        summary.removed = plan.removed
        summary.filesForOtherDevices = tree.otherDevices
        if !state.damaged.isEmpty {
            summary.filesRepaired = Set(summary.downloaded).intersection(state.damaged).count
        }
        if root.keys == nil { summary.unverifiedSigners = tree.signers }
        return summary
    }

    /// The files this environment selects from the remote bundle, manifests included, as a
    /// device with nothing installed would download them. Touches no store.
    package func selection() async throws -> [SelectedEntry] {
        try await devicePlan().files
    }

    /// ``selection()``, and how many entries the conditions leave to other devices
    /// (``SyncSummary/filesForOtherDevices``).
    package func devicePlan() async throws -> (files: [SelectedEntry], otherDevices: Int) {
        let fetcher = Fetcher(transport: transport, configuration: configuration, localRoot: localRoot)
        let root = try await wholeRoot(fetcher: fetcher)
        let keys = try await KeyRotation.currentKeys(configuration: configuration, statePath: nil, fetcher: fetcher)
        let selection = try await manifestTree(fetcher: fetcher, live: nil, liveDirectory: nil, keys: keys).select(
            root: root,
            fetched: true
        )
        let files = selection.files.map { SelectedEntry(path: $0.path.string, size: $0.size, hash: $0.hash?.hex) }
        return (files, selection.otherDevices)
    }
}

extension BundleSync: DeliverySource {
    var rootURL: URL { baseURL }
    var runStore: BundleStore { store }

    /// One sync, in the environment completed with the device's rollout bucket when the app
    /// set none.
    func deliver(_ update: inout StoreUpdate, run: DeliveryRun) async throws -> SyncSummary {
        var resolved = self
        if environment[RolloutBucket.key] == nil {
            let bucket = RolloutBucket.of(installID: try store.installID(), bundle: baseURL.absoluteString)
            resolved.environment[RolloutBucket.key] = .number(String(bucket))
        }
        return try await resolved.sync(update: &update, run: run)
    }
}

extension Duration {
    /// The duration in seconds, fractions included.
    package var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
