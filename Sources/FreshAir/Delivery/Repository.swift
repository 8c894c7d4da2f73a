public import Foundation
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
/// // In Application Support/FreshAir/com.adm.level1, out of backups, its state apart.
/// let level1 = Repository(source: URL(string: "https://s3.amazonaws.com/my-bucket/")!, id: "com.adm.level1")
/// try await level1.run()
/// let dogs = Repository.bundle(descriptor: "com.adm.level1.dogs", in: [level1])
/// ```
///
/// ``init(source:id:cdn:directory:stateFolder:switching:transport:configuration:)`` installs
/// into a folder the app chooses (an App Group's container, say), its state inside or in a
/// `stateFolder` of the app's, and leaves the folders' backup and protection as the app set them.
public struct Repository: Sendable {
    /// Where `<id>/index.json` is published: given as the index's own URL, its folder's parent.
    public private(set) var source: URL
    /// Byte-identical copies of ``source`` (each holding `<id>/index.json` and the archives),
    /// tried in order when it cannot be reached, answers an error, or serves what is refused;
    /// the one that answered last is tried first the next time. Empty by default.
    public var mirrors: [URL] = []
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
    let transport: any HTTPTransport
    /// The small state that must outlive a purge of ``directory`` (high-water marks, rotated
    /// keys, what was rolled back from), when it is kept apart: the on-device defaults of
    /// ``init(source:id:cdn:switching:transport:configuration:)``, or the app's `stateFolder`.
    /// `nil`: in ``workFolder``.
    let keptState: URL?
    /// The platform's backup and protection plan, applied to the folders before each run: the
    /// on-device defaults only. Folders the app chose are left as the app set them.
    let storagePlan: StoragePlan?

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
    ///   - source: where `<id>/index.json` is published (or that index's own URL).
    ///   - id: the repository's identifier, its folder on the server.
    ///   - cdn: where the archives are, when not beside the index.
    ///   - directory: where the bundles are installed, one folder each.
    ///   - stateFolder: where the state that must outlive a purge of `directory` is kept (the
    ///     signed index's anti-rollback floor, rotated keys, what was rolled back from), apart
    ///     from it: give one when `directory` is excluded from backups or may be emptied (a
    ///     folder in Caches, say). `nil`: inside `directory`'s work folder.
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
        stateFolder: URL? = nil,
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
            configuration: configuration,
            keptState: stateFolder
        )
    }

    /// Creates a repository client that keeps its bundles where an app's content belongs on
    /// this platform, as ``FreshAirContent`` keeps a bundle: in
    /// `Application Support/FreshAir/<id>` (`Caches` on tvOS), excluded from backups since it
    /// can be downloaded again, with the state that must outlive a purge (high-water marks,
    /// rotated keys, what was rolled back from) apart in `Application Support/FreshAir/<id>.state`.
    /// On iOS and visionOS both have the Data Protection class
    /// `completeUntilFirstUserAuthentication`. The folders are made and marked by each
    /// ``run(reporting:)``.
    ///
    /// - Parameters:
    ///   - source: where `<id>/index.json` is published (or that index's own URL).
    ///   - id: the repository's identifier, its folder on the server.
    ///   - cdn: where the archives are, when not beside the index.
    ///   - switching: each bundle on its own, or the whole repository at once.
    ///   - transport: how requests are sent; by default a `URLSession` of this value's own.
    ///   - configuration: retries, limits, keys and timeouts.
    public init(
        source: URL,
        id: String,
        cdn: URL? = nil,
        switching: Switching = .perBundle,
        transport: Transport? = nil,
        configuration: SyncConfiguration = SyncConfiguration()
    ) {
        self.init(
            source: source,
            id: id,
            cdn: cdn,
            switching: switching,
            transport: transport?.base,
            configuration: configuration,
            base: StoragePlan.systemFolder
        )
    }

    /// The same, with the system's folders given by `base` (a test's).
    package init(
        source: URL,
        id: String,
        cdn: URL? = nil,
        switching: Switching = .perBundle,
        transport: (any HTTPTransport)?,
        configuration: SyncConfiguration = SyncConfiguration(),
        base: (StoragePlan.Location) -> URL
    ) {
        let folders = StoragePlan.current.folders(name: id, base: base)
        self.init(
            source: source,
            id: id,
            cdn: cdn,
            directory: folders.content,
            switching: switching,
            transport: transport,
            configuration: configuration,
            keptState: folders.state,
            storagePlan: .current
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
        configuration: SyncConfiguration = SyncConfiguration(),
        keptState: URL? = nil,
        storagePlan: StoragePlan? = nil
    ) {
        self.source = Self.source(source, id: id)
        self.id = id
        self.cdn = cdn
        self.directory = directory.standardizedFileURL
        self.switching = switching
        self.transport = transport ?? Transport.platformDefault(connectionsPerHost: configuration.concurrency)
        self.configuration = configuration
        self.keptState = keptState?.standardizedFileURL
        self.storagePlan = storagePlan
    }

    /// The source as the repository's layout needs it: the folder that holds `<id>/`. The
    /// index's own URL (`…/<id>/index.json`, what `breeze serve` prints) stands for that folder.
    static func source(_ given: URL, id: String) -> URL {
        guard let named = address(ofIndex: given), named.id == id else { return given }
        return named.source
    }

    /// The source and id a repository's index URL names (`…/<id>/index.json`), as a bundle's
    /// `manifest.json` URL names its bundle; `nil` for any other URL.
    package static func address(ofIndex url: URL) -> (source: URL, id: String)? {
        guard url.lastPathComponent == "index.json" else { return nil }
        let folder = url.deletingLastPathComponent()
        let id = folder.lastPathComponent
        guard !id.isEmpty, id != "/", id != "..", id != "." else { return nil }
        return (folder.deletingLastPathComponent(), id)
    }

    /// Where the repository's state is: ``keptState`` when it is kept apart, else ``workFolder``.
    var stateFolder: URL { keptState ?? workFolder }

    /// Creates the state folder when it is kept apart and, for the on-device defaults, applies
    /// the platform's plan (backup exclusion on the content, the Data Protection class on both).
    private func prepareFolders() throws {
        guard let keptState else { return }
        guard let storagePlan else { return try Disk.createDirectory(keptState.path) }
        // A whole-repository `directory` is a link the snapshot switch makes: not a folder.
        let content = switching == .perBundle ? directory : workFolder
        try storagePlan.prepare(content: [content], state: [keptState])
    }

    /// The folder holding the index's store, each bundle's store and the snapshots: content,
    /// and the state too unless ``keptState`` holds it.
    var workFolder: URL {
        switch switching {
        case .perBundle: directory.appendingPathComponent(".freshair-repository")
        case .wholeRepository:
            directory.deletingLastPathComponent().appendingPathComponent(
                ".\(directory.lastPathComponent).freshair-repository"
            )
        }
    }

    /// The folder holding each bundle's store, one folder per name.
    private var bundlesFolder: URL { workFolder.appendingPathComponent("bundles") }

    /// The store behind bundle `name`.
    public func store(forBundle name: String) -> BundleStore {
        let root = bundlesFolder.appendingPathComponent(name)
        // A whole-repository switch keeps each bundle's own link inside its store; readers go
        // through the snapshot.
        return BundleStore(
            root: root,
            liveLink: switching == .perBundle ? directory.appendingPathComponent(name) : nil,
            stateFolder: keptState?.appendingPathComponent("bundles/\(name)")
        )
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

    /// The bundles installed now, by name, with the version each is at: what an app lists
    /// (levels downloaded, regions available offline). A bundle an interrupted first install
    /// has not reached yet is not in it.
    public var installedBundles: [String: Int] {
        var installed: [String: Int] = [:]
        for name in Disk.contentsOfDirectory(bundlesFolder.path) where bundle(named: name) != nil {
            installed[name] = installedVersion(of: name)
        }
        return installed
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

        /// One line for a terminal: what moved and what it cost (the run's `requests` and bytes
        /// wasted).
        func oneLine(requests: Int, bytesWasted: Int64) -> String {
            let index = indexNotModified ? "index 304 Not Modified" : "index fetched"
            let list = updated.keys.sorted().map { "\($0) → \(updated[$0]!)" }.joined(separator: ", ")
            let kept = keptAfterRollback.isEmpty ? "" : "\(keptAfterRollback.count) kept after a rollback, "
            return
                "Repository: \(index); \(updated.count) updated\(list.isEmpty ? "" : " (\(list))"), \(unchanged.count) unchanged, \(kept)"
                + "\(removed.count) removed; \(ByteCount(bytesDownloaded)) in \(requests) request\(requests == 1 ? "" : "s")\(wastedNote(bytesWasted))."
        }
    }

    /// The store that keeps the accepted index: its live version holds `index.json`, and its
    /// record the validators, sequence and expiry the next check asks with. Its lock is the
    /// repository's (one update at a time), and its state folder is the repository's: the
    /// high-water mark and rotated keys live beside the bundles' stores.
    var indexStore: BundleStore {
        BundleStore(root: workFolder.appendingPathComponent("index"), stateFolder: stateFolder)
    }

    /// Runs one update and returns the repository's own account of it (tests read it);
    /// ``run(reporting:)`` gives the same as every delivery mode does.
    @discardableResult
    package func update() async throws -> Result {
        try await run(reporting: { _ in }).repository!
    }

    /// One pass of an update under the repository's lock: the index, then the bundles it
    /// changed, then the bundles it dropped, then the index kept for the next check. Also the
    /// keys a new index says signed it when no key is pinned (``SyncSummary/unverifiedSigners``).
    private func updateHoldingLock(
        _ update: inout StoreUpdate,
        run: DeliveryRun
    ) async throws -> (Result, unverifiedSigners: [String]) {
        let saved = try await savedIndex(update)
        let current = try await currentIndex(saved: saved, update: update, run: run)
        let index = current.index
        let plan = try plan(index)
        let bytes = try await update.withoutLock {
            try await installAll(plan.changed, of: index, run: run)
        }
        let removed = try await removeDropped(keeping: Set(index.bundles.keys))
        try await keep(current, over: saved, in: &update)
        let result = Result(
            indexNotModified: current.fetched == nil,
            updated: Dictionary(uniqueKeysWithValues: plan.changed.map { ($0, index.bundles[$0]!.version) }),
            unchanged: index.bundles.keys.filter { !plan.moved.contains($0) }.sorted(),
            keptAfterRollback: plan.kept,
            removed: removed.sorted(),
            bytesDownloaded: bytes
        )
        return (result, current.unverifiedSigners)
    }

    private var indexURL: URL { source.appendingPathComponent(id).appendingPathComponent("index.json") }

    /// The index the live version of ``indexStore`` holds, and its record; `nil` before the
    /// first update, or when it is damaged or came from another source (then the index is
    /// fetched whole).
    private func savedIndex(_ update: StoreUpdate) async throws -> (index: RepositoryIndex, record: VersionRecord)? {
        guard let record = update.live, record.source == indexURL.absoluteString,
            let folder = update.liveDirectory
        else { return nil }
        let data = try? await BlockingPool.run { try Disk.read(folder + "/index.json") }
        guard let data, record.file(at: "index.json")?.hash == ContentHash.of(data, using: .sha256),
            let index = try? RepositoryIndex(data: data, source: indexURL.absoluteString)
        else { return nil }
        return (index, record)
    }

    /// The index an update installs from.
    private struct CurrentIndex {
        var index: RepositoryIndex
        /// Its bytes and validators when fetched; `nil` on `304` (the saved one).
        var fetched: (data: Data, validators: HTTPValidators)?
        /// The keys a fetched index says signed it, when no key was pinned to check them.
        var unverifiedSigners: [String] = []
    }

    /// The index to install from: fetched and verified, or the saved one on `304` (when not
    /// expired). Raises the high-water mark of a signed one.
    private func currentIndex(
        saved: (index: RepositoryIndex, record: VersionRecord)?,
        update: StoreUpdate,
        run: DeliveryRun
    ) async throws -> CurrentIndex {
        // With keys pinned, only an index saved after it was verified counts.
        let trustedSaved = configuration.pinsKeys && saved?.record.sequence == nil ? nil : saved
        let (keys, answer) = try await run.keysAndRoot(
            update,
            url: indexURL,
            validators: trustedSaved?.record.validators,
            limit: configuration.maxDocumentSize
        )
        switch answer {
        case .notModified:
            try FreshnessCheck.checkStillValid(
                trustedSaved?.record.expires,
                source: indexURL.absoluteString,
                configuration: configuration
            )
            return CurrentIndex(index: trustedSaved!.index)
        case .fetched(let document, let validators):
            let data = try document.bytes()  // never spilled: an index is asked for in memory
            let index: RepositoryIndex
            do throws(ManifestError) {
                // With keys pinned, an index that names no signature is refused before it is parsed.
                index = try RepositoryIndex(data: data, source: indexURL.absoluteString, requireSignature: keys != nil)
            } catch { throw FreshAirError.manifest(error) }
            guard let keys else {
                return CurrentIndex(
                    index: index,
                    fetched: (data, validators),
                    unverifiedSigners: index.release.signatures.map(\.key)
                )
            }
            try verify(index, data: data, keys: keys, liveSequence: trustedSaved?.record.sequence)
            return CurrentIndex(index: index, fetched: (data, validators))
        }
    }

    /// Keeps a fetched index as the live version of ``indexStore`` once its bundles are in,
    /// so that the next check asks with its validators and a `304` is answered from it. The
    /// same bytes under new validators update the record alone.
    private func keep(
        _ current: CurrentIndex,
        over saved: (index: RepositoryIndex, record: VersionRecord)?,
        in update: inout StoreUpdate
    ) async throws {
        guard let (data, validators) = current.fetched else { return }  // a 304: what is live stays
        let file = FileRecord(hash: ContentHash.of(data, using: .sha256), size: Int64(data.count))
        func described(_ record: VersionRecord) -> VersionRecord {
            var record = record
            record.validators = validators
            record.sequence = current.index.release.sequence
            record.expires = current.index.release.expires
            record.repository = id
            return record
        }
        if let live = saved?.record, live.file(at: "index.json") == file {
            let updated = described(live)
            if updated != live { try await update.persist(updated) }
            return
        }
        let source = indexURL.absoluteString
        try await update.assemble { staged in
            try await BlockingPool.run { [staged] in try staged.write(data, at: BundlePath(trusted: "index.json")) }
            return described(
                VersionRecord(
                    id: staged.id,
                    source: source,
                    created: configuration.environment.now(),
                    files: ["index.json": file]
                )
            )
        }
        try? await BlockingPool.run { [workFolder] in
            // FreshAir 0.1.0 kept the index in `state.json`, under a lock of its own; both are
            // replaced by the index store (its first check fetches the index whole, once).
            for legacy in ["state.json", "lock"] { try Disk.remove(workFolder.appendingPathComponent(legacy).path) }
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
                BundleStore.RejectedContent.keepsRollback(
                    try store.rejected(from: $0.url.absoluteString),
                    after: .versionedURL
                )
            }
        }
        return (moved, kept, moved.filter { !kept.contains($0) })
    }

    /// Installs each changed bundle, `concurrency` at a time; returns the bytes downloaded.
    private func installAll(_ changed: [String], of index: RepositoryIndex, run: DeliveryRun) async throws -> Int64 {
        // Bytes as they arrive, for every mode's progress events; expected when the index lists sizes.
        let counter = ProgressCounter(
            filesTotal: changed.count,
            bytesExpected: changed.lazy.map { index.bundles[$0]?.size }.knownTotal(),
            uptime: run.fetcher.environment.uptime,
            report: run.report
        )
        var bytes: Int64 = 0
        let work = changed.map { ($0, index.bundles[$0]!) }
        try await forEachConcurrently(work, width: configuration.concurrency) { name, entry in
            let size = try await install(name, entry: entry, fetcher: run.fetcher) { counter.add(bytes: $0) }
            counter.completeFiles(1)
            run.report(.downloaded(path: name, bytes: size))
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
            let stores = bundlesFolder.path
            for name in Disk.contentsOfDirectory(stores) where !names.contains(name) {
                // Only the link FreshAir made: a folder of the user's at that name stays.
                let live = directory.appendingPathComponent(name).path
                if switching == .perBundle, LiveLink.leads(live, into: stores + "/" + name) { try Disk.remove(live) }
                try Disk.remove(stores + "/" + name)
                if let keptState { try Disk.remove(keptState.appendingPathComponent("bundles/\(name)").path) }
                removed.append(name)
            }
            if switching == .wholeRepository {
                try RepositorySnapshot(repository: self).switchIfStale(names: names.sorted())
            }
            return removed
        }
    }

    /// With keys pinned: signed by one of them, for this repository, not older than what was
    /// accepted, not expired, and every bundle's archive named by digest and size. Raises the
    /// high-water mark.
    private func verify(_ index: RepositoryIndex, data: Data, keys: KeySet, liveSequence: Int?) throws {
        let source = indexURL.absoluteString
        do throws(ManifestError) {
            try index.release.verify(keys, source: source)
            for (name, bundle) in index.bundles.sorted(by: { $0.key < $1.key })
            where bundle.sha256.flatMap(ContentHash.init(hex:)) == nil || bundle.size == nil {
                throw ManifestError(
                    source: source,
                    problem: .unexpectedShape(
                        "bundle \"\(name)\" has no archive \"sha256\" and \"size\", which a signed index needs; publish the index with each archive's digest and size"
                    )
                )
            }
        } catch { throw FreshAirError.manifest(error) }
        try RootAcceptance(
            document: indexURL,
            source: source,
            marks: indexStore.highWaterMarks,
            configuration: configuration,
            defaultIdentity: id
        )
        .accept(index.release.offered(digest: ContentHash.of(data, using: .sha256).hex), liveSequence: liveSequence)
    }

    /// Downloads `<name>-<version>.tar.gz` (falling back to `.tar` unless the index is signed,
    /// which names the `.tar.gz`'s digest), unpacking it as it arrives, and makes it the
    /// bundle's live version; returns the archive's size.
    private func install(
        _ name: String,
        entry: RepositoryIndex.Bundle,
        fetcher: Fetcher,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> Int64 {
        let store = store(forBundle: name)
        let isFirst = !Disk.exists(bundlesFolder.appendingPathComponent(name).path)
        do {
            return try await install(name, into: store, entry: entry, fetcher: fetcher, progress: progress)
        } catch let error as FreshAirError where error.code == .liveLocationOccupied && isFirst {
            // Refused before anything was live: the store it made goes with the refusal, so
            // nothing later takes the user's folder at that name for one of ours.
            try? Disk.remove(bundlesFolder.appendingPathComponent(name).path)
            if let keptState { try? Disk.remove(keptState.appendingPathComponent("bundles/\(name)").path) }
            throw error
        }
    }

    private func install(
        _ name: String,
        into store: BundleStore,
        entry: RepositoryIndex.Bundle,
        fetcher: Fetcher,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> Int64 {
        let version = entry.version
        let signed = configuration.pinsKeys ? entry.sha256.flatMap(ContentHash.init(hex:)) : nil
        let installer = ExtractingInstaller(
            limits: configuration.extraction,
            topLevelFolderToStrip: "\(name)-\(version)"
        )
        return try await store.update { update in
            let (lock, liveID) = (update.lock, update.live?.id)
            var size: Int64 = 0
            try await update.assemble { staged in
                var lastError: (any Error)?
                for (format, url) in archiveURLs(name, version: version).prefix(signed == nil ? 2 : 1) {
                    let fileName = url.lastPathComponent
                    var job = DownloadJob(
                        label: "\(id)/\(fileName)",
                        url: url,
                        partialPath: staged.partialsPath + "/\(fileName)",
                        expectedHash: signed,
                        expectedSize: signed == nil ? nil : entry.size,
                        limit: configuration.sizeCap(declared: signed != nil),
                        validators: nil
                    )
                    job.isTransient = true
                    job.listedIn = .repositoryIndex
                    let archive = ArchiveDownload(installer: installer, format: format, source: url.absoluteString)
                    let streaming = archive.streaming(into: staged)
                    let file: DownloadedFile
                    do {
                        let outcome = try await StoreUpdate.withoutLock(lock, store: store, liveID: liveID) {
                            try await fetcher.download(job, tee: streaming, progress: progress)
                        }
                        guard case .fetched(let fetched, _) = outcome else { continue }
                        file = fetched
                    } catch let error as FreshAirError where error.status == 404 {
                        lastError = error
                        continue
                    }
                    // The archive is not kept: gone before activation flushes the disk.
                    defer { try? Disk.remove(file.path) }
                    let records = try await archive.install(
                        file.path,
                        into: staged,
                        streamed: file.teedWholeBody ? streaming : nil
                    )
                    size = file.size
                    var record = VersionRecord(
                        id: staged.id,
                        source: url.absoluteString,
                        created: configuration.environment.now(),
                        files: records
                    )
                    record.bundleVersion = version
                    record.repository = id
                    return record
                }
                throw lastError ?? FreshAirError.httpStatus(404, url: archiveURLs(name, version: version)[0].url)
            }
            return size
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

extension Repository: ContentUpdater, DeliverySource {
    /// Runs one update, reporting it as every delivery mode does: the repository's bundles are
    /// the files, and the summary's ``SyncSummary/oneLine`` names each bundle that moved.
    @discardableResult
    public func run(reporting report: @escaping @Sendable (SyncEvent) -> Void) async throws -> SyncSummary {
        try await BlockingPool.run { [self] in try prepareFolders() }
        let failover = SourceFailover(
            sources: [source] + mirrors.map { Self.source($0, id: id) },
            memory: stateFolder.appendingPathComponent("source.json").path
        )
        return try await failover.run { source in
            var attempt = self
            (attempt.source, attempt.mirrors) = (source, [])
            return try await DeliveryRun.perform(attempt, report: report)
        }
    }

    var rootURL: URL { indexURL }
    /// The index's store: its lock is the repository's. When another update accepted a new
    /// index while this one waited on the network, this one starts again from it.
    var runStore: BundleStore { indexStore }
    var localRoot: URL? { source.isFileURL ? source : nil }

    func deliver(_ update: inout StoreUpdate, run: DeliveryRun) async throws -> SyncSummary {
        let (result, unverifiedSigners) = try await updateHoldingLock(&update, run: run)
        if result.indexNotModified { run.report(.notModified) }
        var summary = SyncSummary(result)
        summary.unverifiedSigners = unverifiedSigners
        return summary
    }
}

extension Repository.Result {
    /// Reads a result written by this or an earlier FreshAir: the bundles kept after a
    /// rollback, added after the first release, are none when absent.
    package init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        indexNotModified = try values.decode(Bool.self, forKey: .indexNotModified)
        updated = try values.decode([String: Int].self, forKey: .updated)
        unchanged = try values.decode([String].self, forKey: .unchanged)
        keptAfterRollback = try values.decodeIfPresent([String].self, forKey: .keptAfterRollback) ?? []
        removed = try values.decode([String].self, forKey: .removed)
        bytesDownloaded = try values.decode(Int64.self, forKey: .bytesDownloaded)
    }
}
