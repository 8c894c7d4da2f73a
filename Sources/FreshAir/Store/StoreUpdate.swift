import Foundation
import Synchronization

/// The store while one update holds its lock.
struct StoreUpdate: Sendable {
    let store: BundleStore
    /// The live version: as the update began, then whatever it activated.
    private(set) var live: VersionRecord?
    /// Held for the local steps, let go while the update waits on the network.
    let lock: StoreLock
    /// Where this update's interrupted downloads go and are resumed from: the store's
    /// `partials/`, or a folder of its own while another update is using that (see
    /// ``BundleStore/claimPartials()``), so two updates never write one file.
    let partialsPath: String

    /// Lets go of the store's lock while `body` waits on the network, so a suspended app
    /// holds no file lock and another process may use the store meanwhile; then takes it
    /// again. Everything `body` writes goes to a leased staged folder or to `partials/`.
    ///
    /// - Throws: ``StoreChangedMeanwhile`` when another update changed the live version in the
    ///   meantime (whatever `body` ended with: its plan was made against the old one), so the
    ///   caller plans again; else what `body` threw.
    func withoutLock<Result>(_ body: () async throws -> Result) async throws -> Result {
        try await Self.withoutLock(lock, store: store, liveID: live?.id, body)
    }

    /// ``withoutLock(_:)`` for a caller that cannot borrow the update (inside ``assemble(_:)``).
    static func withoutLock<Result>(
        _ lock: StoreLock,
        store: BundleStore,
        liveID: Int?,
        _ body: () async throws -> Result
    ) async throws -> Result {
        try await lock.released(while: body, unchanged: { store.liveVersionID == liveID })
    }

    /// The live version's folder, where unchanged files are carried over from.
    var liveDirectory: String? { live.map { store.versionPath($0.id) } }

    /// Starts assembling the next version in staging.
    func stage() throws -> StagedVersion {
        let ids = (Disk.contentsOfDirectory(store.versionsPath) + Disk.contentsOfDirectory(store.stagingPath))
            .compactMap { Int($0.split(separator: ".").first ?? "") }
        let id = (ids.max() ?? 0) + 1
        let path = store.stagingPath + "/\(id)"
        try FolderLease.claim(path)
        try Disk.createDirectory(path)
        return try StagedVersion(id: id, path: path, partialsPath: partialsPath)
    }

    /// Assembles and activates the next version, the one way every delivery mode installs:
    /// `fill` writes the version into a new staged folder and returns its record, or `nil`
    /// when there turned out to be nothing to install. If anything fails, the live version
    /// stays as it was and the staged folder is set aside for the next update to reuse.
    ///
    /// - Returns: the activated record, or `nil` when `fill` returned `nil`.
    @discardableResult
    mutating func assemble(_ fill: (inout StagedVersion) async throws -> VersionRecord?) async throws -> VersionRecord?
    {
        var staged = try await BlockingPool.run { [self] in try stage() }
        do {
            guard let record = try await fill(&staged) else {
                try await BlockingPool.run { [staged] in
                    try Disk.remove(staged.path)
                    FolderLease.drop(staged.path)
                }
                return nil
            }
            // Moving, flushing and tidying block on the disk: done on the blocking pool.
            self = try await BlockingPool.run { [self, staged] in
                var update = self
                try update.activate(staged, record: record)
                return update
            }
            return live
        } catch {
            // What was downloaded and verified so far stays for the next update to reuse. The
            // lease goes even when the set-aside fails (a full disk has no block for
            // `interrupted/`): a folder still leased to a live process is never set aside or freed.
            try? await BlockingPool.run { [store, staged] in
                defer { FolderLease.drop(staged.path) }
                try store.setAside([staged.path])
            }
            throw error
        }
    }

    /// Makes a staged version live: tree moved into `versions/`, record written, data
    /// flushed, then the live link swapped in one `rename(2)` and its folder flushed. Older versions are removed
    /// afterwards, except the one just replaced.
    mutating func activate(_ staged: StagedVersion, record: VersionRecord) throws {
        var record = record
        record.id = staged.id
        record.previous = live?.id
        try Disk.rename(staged.path, to: store.versionPath(staged.id))
        FolderLease.drop(staged.path)
        try writeRecord(record)
        // Data, folders and record on disk before the link names them (see Durability).
        try Durability.flush(
            version: store.versionPath(staged.id),
            record: store.recordPath(staged.id),
            linked: staged.linkedPaths,
            folder: staged.folder
        )
        try pointLiveLink(at: staged.id)
        live = record
        // The new version is live: what follows is tidying, and a failure in it must not report
        // the update as failed. Whatever is left is tidied by the next update.
        try? store.forgetRejected(from: record.source)
        try? collectGarbage()
        try? store.removeInterruptedWork()
        // Every planned download completed: nothing is left to resume (this update's own
        // partials only: another update may be downloading into its own now).
        for partial in Disk.contentsOfDirectory(partialsPath) {
            try? Disk.remove(partialsPath + "/" + partial)
        }
    }

    /// Writes a version's record beside its folder, atomically.
    func writeRecord(_ record: VersionRecord) throws {
        try Disk.writeAtomically(to: store.recordPath(record.id), producing: record.writeJSON)
    }

    /// ``writeRecord(_:)`` from async code, on the blocking pool.
    func persist(_ record: VersionRecord) async throws {
        try await BlockingPool.run { [self] in try writeRecord(record) }
    }

    /// The version before the live one, when it is still on disk to go back to.
    var restorableID: Int? {
        guard let id = live?.previous, Disk.isDirectory(store.versionPath(id)) else { return nil }
        return id
    }

    /// Makes version `id` (``restorableID``) live again and removes the one gone back from.
    mutating func restore(_ id: Int) throws -> VersionRecord {
        try pointLiveLink(at: id)
        let restored = try store.record(id)
        live = restored
        try? collectGarbage()  // live already: the next update removes what is left
        return restored
    }

    func pointLiveLink(at id: Int) throws {
        try LiveLink.point(store.liveLink, at: store.versionPath(id))
    }

    /// Removes every version but the live one and the one before it.
    func collectGarbage() throws {
        guard let liveID = store.liveVersionID else { return }
        // The record in hand when it is the live one: re-reading 10,000 entries costs ~10 ms.
        let previous = live?.id == liveID ? live?.previous : try store.record(liveID).previous
        let keep: Set<Int> = [liveID, previous].compactMap { $0 }.reduce(into: []) { $0.insert($1) }
        for name in Disk.contentsOfDirectory(store.versionsPath) {
            // Anything else in versions/ is a leftover (a record's temporary file from a killed write).
            if let id = Int(name.split(separator: ".", omittingEmptySubsequences: false).first ?? ""), keep.contains(id)
            {
                continue
            }
            try Disk.remove(store.versionsPath + "/" + name)
        }
    }
}

/// A version being assembled in staging. Everything is written through its
/// `ConfinedFolder`, so nothing a server names can land outside it.
struct StagedVersion: Sendable {
    let id: Int
    let folder: ConfinedFolder
    /// Where the update that stages this version keeps its partial downloads.
    let partialsPath: String
    /// Paths hard-linked from another version, whose data is durable already: kept only where
    /// the flush goes file by file and skips them (``Durability/flushesFileByFile``). Linux
    /// flushes the version whole; the list cost 4.3 MB at 200,000 files, held from the carry-over
    /// to the switch, and a sort of every path at the switch.
    private let linked: LinkedPaths?

    /// The paths ``link(_:at:)`` carried over unchanged; none when they are not kept.
    var linkedPaths: PathSet { PathSet(linked?.paths.withLock { $0 } ?? PathList()) }

    /// The staged folder's path.
    var path: String { folder.path }

    init(id: Int, path: String, partialsPath: String, keepingLinks: Bool = Durability.flushesFileByFile) throws {
        self.id = id
        self.partialsPath = partialsPath
        linked = keepingLinks ? LinkedPaths() : nil
        folder = try ConfinedFolder(path: path)
    }

    /// Moves a verified file into the tree at `bundlePath` (nothing to do when it was
    /// downloaded there).
    func place(_ file: String, at bundlePath: BundlePath) throws {
        guard file != path + "/" + bundlePath.string else { return }
        try folder.moveIn(file, at: bundlePath)
    }

    /// Creates the folder `bundlePath` will be written in.
    func prepareFolder(for bundlePath: BundlePath) throws {
        if let parent = bundlePath.parent { try folder.makeFolder(parent) }
    }

    /// Hard-links a file from outside (an interrupted update's verified copy).
    func link(_ existing: String, at bundlePath: BundlePath) throws {
        try folder.link(external: existing, at: bundlePath)
        linked?.paths.withLock { $0.append(bundlePath.string.utf8) }
    }

    /// Hard-links unchanged files at the same paths in `live`, the live version's folder, in
    /// path order.
    func link(_ paths: some Sequence<BundlePath>, from live: FolderWalk) throws {
        guard let linked else { return try folder.link(paths, from: live) }
        try linked.paths.withLock { list in
            try folder.link(paths, from: live) { list.append($0.string.utf8) }
        }
    }

    /// Hard-links a second path to a file already placed in this version.
    func duplicate(_ placed: BundlePath, at bundlePath: BundlePath) throws {
        try folder.hardLink(placed, at: bundlePath)
    }

    /// Writes bytes held in memory (a manifest) at `bundlePath`.
    func write(_ data: Data, at bundlePath: BundlePath) throws {
        try folder.write(data, at: bundlePath)
    }
}

/// The paths a staged version linked, shared by the tasks that assemble it.
private final class LinkedPaths: Sendable {
    let paths = Mutex(PathList())
}
