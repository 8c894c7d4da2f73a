public import Foundation

/// Where synced content lives on disk, one complete version at a time.
///
/// ```
/// root/
///   versions/7/         the live version: a complete, verified tree
///   versions/7.json     its `VersionRecord`
///   versions/6/         the previous version, kept for rollBack()
///   staging/8/          the next version while it is being assembled
///   partials/           interrupted downloads, resumed by the next sync (partials.owner:
///                       the update using it; another update meanwhile gets partials-<id>/)
///   interrupted/        what a killed or failed update assembled, reused by the next
///   lock
/// liveLink -> root/versions/7   (default: root/live)
/// stateFolder/          (default: root) install-id, high-water.json, keys.json, rejected.json
/// ```
///
/// A new version is assembled in `staging/` (unchanged files are hard-linked from the live
/// version, new ones downloaded and verified), then made live by renaming a symbolic link
/// over ``liveLink``: one atomic step, so a reader sees the old complete version or the
/// new complete version, never a mix. Readers need no lock; updates take an exclusive one.
public struct BundleStore: Sendable {
    /// The folder that holds versions, staging and partial downloads.
    public let root: URL
    /// The path that always leads to the live version (a symbolic link the store replaces).
    public let liveLink: URL
    /// Where the store keeps the little it must not lose when its content is purged: the install
    /// ID (rollout buckets), the high-water marks and rotated keys (anti-rollback), and what was
    /// rolled back from. By default ``root`` itself; a folder of its own lets the content live
    /// where the system may purge it (tvOS's Caches) or outside backups, while this stays.
    public let stateFolder: URL
    /// How long an update waits for another process's update to finish.
    public var lockTimeout: Duration = .seconds(60)
    /// The clocks the store's waits and lease ages read: a run sets its configuration's.
    package var environment = SyncEnvironment.system

    /// - Parameters:
    ///   - root: the store's own folder; created when first needed.
    ///   - liveLink: where the live version appears; defaults to `root/live`. It must not
    ///     exist yet, be empty, or be a link this store made.
    ///   - stateFolder: where the small state that must survive a purge of `root` is kept;
    ///     defaults to `root`.
    public init(root: URL, liveLink: URL? = nil, stateFolder: URL? = nil) {
        self.root = root.standardizedFileURL
        self.liveLink = (liveLink ?? root.appendingPathComponent("live")).standardizedFileURL
        self.stateFolder = (stateFolder ?? root).standardizedFileURL
    }

    var versionsPath: String { root.appendingPathComponent("versions").path }
    var stagingPath: String { root.appendingPathComponent("staging").path }
    var partialsPath: String { root.appendingPathComponent("partials").path }

    func versionPath(_ id: Int) -> String { versionsPath + "/\(id)" }
    func recordPath(_ id: Int) -> String { versionsPath + "/\(id).json" }

    /// The live version's number, read from the link; `nil` before the first install.
    public var liveVersionID: Int? {
        guard let target = Disk.readLink(liveLink.path) else { return nil }
        let resolved = target.hasPrefix("/") ? target : liveLink.deletingLastPathComponent().path + "/" + target
        let folder = URL(fileURLWithPath: resolved).standardizedFileURL
        guard folder.deletingLastPathComponent().path == URL(fileURLWithPath: versionsPath).standardizedFileURL.path
        else {
            return nil
        }
        // A link left dangling (the store folder was deleted) means nothing is installed.
        guard let id = Int(folder.lastPathComponent), Disk.isDirectory(versionPath(id)), Disk.exists(recordPath(id))
        else { return nil }
        return id
    }

    /// The live version's folder (resolved, so it stays the same version while you read it),
    /// or `nil` when nothing is installed.
    public var liveDirectory: URL? {
        liveVersionID.map { URL(fileURLWithPath: versionPath($0), isDirectory: true) }
    }

    /// The live version's record, or `nil` when nothing is installed.
    package func liveRecord() throws -> VersionRecord? {
        guard let id = liveVersionID else { return nil }
        return try record(id)
    }

    func record(_ id: Int) throws -> VersionRecord {
        if let large = try? VersionRecord(largeFileAt: recordPath(id)) { return large }
        let data = try Disk.readBytes(recordPath(id))
        do { return try VersionRecord(json: data) } catch {
            throw FreshAirError.fileSystem(
                operation: "read version record",
                path: recordPath(id),
                reason: "\(error)",
                underlying: error
            )
        }
    }

    /// Makes the previous version live again, e.g. when the app finds the new content
    /// unusable. The version rolled back from is removed, and is not installed again: the next
    /// sync keeps the rollback (``SyncSummary/Outcome/keptAfterRollback``) until something new
    /// is published.
    ///
    /// - Returns: the number of the version now live.
    /// - Throws: ``FreshAirError/Code/noPreviousVersion`` when there is none to go back to.
    @discardableResult
    public func rollBack() async throws -> Int {
        try await restorePrevious().id
    }

    /// ``rollBack()``, returning the record of the version now live.
    package func restorePrevious() async throws -> VersionRecord {
        try await update { update in
            guard let previousID = update.restorableID, let rolledBack = update.live else {
                throw FreshAirError.noPreviousVersion
            }
            try rememberRejected(rolledBack)
            return try update.restore(previousID)
        }
    }

    /// The file every update of this store, in any process, locks (`flock`).
    var lockPath: String { root.appendingPathComponent("lock").path }

    /// The store's lock, waited for up to ``lockTimeout`` on the store's clock.
    func takeLock() async throws -> StoreLock {
        try await StoreLock(
            path: lockPath,
            timeout: lockTimeout,
            environment: environment
        )
    }

    /// Runs `body` holding the store's lock, after setting aside what an interrupted update
    /// left (see ``setAsideInterruptedWork(liveID:)``). Every change to the store goes through here.
    ///
    /// `body` lets go of the lock while it waits on the network (``StoreUpdate/withoutLock(_:)``);
    /// when another update made a version live meanwhile, `body` runs again from the start
    /// against that version, up to 3 times in all.
    func update<Result>(_ body: (inout StoreUpdate) async throws -> Result) async throws -> Result {
        for path in [root.path, versionsPath, stagingPath, partialsPath, stateFolder.path] {
            try Disk.createDirectory(path)
        }
        let lock = try await takeLock()
        defer { lock.release() }
        let partials = try claimPartials()
        defer { releasePartials(partials) }
        return try await lock.replanningWhenChanged {
            try LiveLink.claim(liveLink.path)
            let live = try liveRecord()
            try setAsideInterruptedWork(liveID: live?.id)
            var update = StoreUpdate(store: self, live: live, lock: lock, partialsPath: partials)
            return try await body(&update)
        }
    }

}
