import Foundation

/// Where synced content lives on disk, one complete version at a time.
///
/// ```
/// root/
///   versions/7/         the live version: a complete, verified tree
///   versions/7.json     its ``VersionRecord``
///   versions/6/         the previous version, kept for rollBack()
///   staging/8/          the next version while it is being assembled
///   partials/           interrupted downloads, resumed by the next sync
///   lock
/// liveLink -> root/versions/7   (default: root/live)
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
    /// How long an update waits for another process's update to finish.
    public var lockTimeout: Duration = .seconds(60)

    /// - Parameters:
    ///   - root: the store's own folder; created when first needed.
    ///   - liveLink: where the live version appears; defaults to `root/live`. It must not
    ///     exist yet, be empty, or be a link this store made.
    public init(root: URL, liveLink: URL? = nil) {
        self.root = root.standardizedFileURL
        self.liveLink = (liveLink ?? root.appendingPathComponent("live")).standardizedFileURL
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
        guard folder.deletingLastPathComponent().path == URL(fileURLWithPath: versionsPath).standardizedFileURL.path else {
            return nil
        }
        // A link left dangling (the store folder was deleted) means nothing is installed.
        guard let id = Int(folder.lastPathComponent), Disk.isDirectory(versionPath(id)), Disk.exists(recordPath(id)) else { return nil }
        return id
    }

    /// The live version's folder (resolved, so it stays the same version while you read it),
    /// or `nil` when nothing is installed.
    public var liveDirectory: URL? {
        liveVersionID.map { URL(fileURLWithPath: versionPath($0), isDirectory: true) }
    }

    /// The live version's record, or `nil` when nothing is installed.
    public func liveRecord() throws -> VersionRecord? {
        guard let id = liveVersionID else { return nil }
        return try record(id)
    }

    func record(_ id: Int) throws -> VersionRecord {
        let data = try Disk.read(recordPath(id))
        do { return try VersionRecord(json: data) } catch {
            throw FreshAirError.fileSystem(operation: "read version record", path: recordPath(id), reason: "\(error)")
        }
    }

    /// Makes the previous version live again, e.g. when the app finds the new content
    /// unusable. The version rolled back from is removed.
    @discardableResult
    public func rollBack() async throws -> VersionRecord {
        try await update { update in
            guard let previousID = update.live?.previous, Disk.isDirectory(versionPath(previousID)) else {
                throw FreshAirError.noPreviousVersion
            }
            try update.pointLiveLink(at: previousID)
            try update.collectGarbage()
            return try record(previousID)
        }
    }

    /// Runs `body` holding the store's lock, after clearing what a killed update left in
    /// staging. Every change to the store goes through here.
    func update<Result>(_ body: (inout StoreUpdate) async throws -> Result) async throws -> Result {
        for path in [root.path, versionsPath, stagingPath, partialsPath] { try Disk.createDirectory(path) }
        let lock = try await StoreLock(path: root.appendingPathComponent("lock").path, timeout: lockTimeout)
        defer { lock.release() }
        try checkLiveLinkIsOurs()
        for leftover in Disk.contentsOfDirectory(stagingPath) { try Disk.remove(stagingPath + "/" + leftover) }
        var update = StoreUpdate(store: self, live: try liveRecord())
        return try await body(&update)
    }

    private func checkLiveLinkIsOurs() throws {
        let path = liveLink.path
        guard Disk.exists(path), Disk.readLink(path) == nil else { return }
        // An empty folder (a freshly made destination) may be replaced; anything else is the user's.
        guard Disk.isDirectory(path), Disk.contentsOfDirectory(path).isEmpty else {
            throw FreshAirError.liveLocationOccupied(path: path)
        }
        try Disk.remove(path)
    }
}

/// The store while one update holds its lock.
struct StoreUpdate {
    let store: BundleStore
    /// The live version: as the update began, then whatever it activated.
    private(set) var live: VersionRecord?

    /// The live version's folder, where unchanged files are carried over from.
    var liveDirectory: String? { live.map { store.versionPath($0.id) } }

    /// Starts assembling the next version in staging.
    func stage() throws -> StagedVersion {
        let ids = (Disk.contentsOfDirectory(store.versionsPath) + Disk.contentsOfDirectory(store.stagingPath))
            .compactMap { Int($0.split(separator: ".").first ?? "") }
        let id = (ids.max() ?? 0) + 1
        let path = store.stagingPath + "/\(id)"
        try Disk.createDirectory(path)
        return StagedVersion(id: id, path: path)
    }

    /// Assembles and activates the next version, the one way every delivery mode installs:
    /// `fill` writes the version into a new staged folder and returns its record, or `nil`
    /// when there turned out to be nothing to install. If anything fails, the staged folder
    /// is removed and the live version stays as it was.
    ///
    /// - Returns: the activated record, or `nil` when `fill` returned `nil`.
    @discardableResult
    mutating func assemble(_ fill: (inout StagedVersion) async throws -> VersionRecord?) async throws -> VersionRecord? {
        var staged = try stage()
        do {
            guard let record = try await fill(&staged) else {
                try Disk.remove(staged.path)
                return nil
            }
            try activate(staged, record: record)
            return live
        } catch {
            try? Disk.remove(staged.path)
            throw error
        }
    }

    /// Makes a staged version live: record written, tree moved into `versions/`, data
    /// flushed, then the live link swapped in one `rename(2)`. Older versions are removed
    /// afterwards, except the one just replaced.
    mutating func activate(_ staged: StagedVersion, record: VersionRecord) throws {
        var record = record
        record.id = staged.id
        record.previous = live?.id
        try Disk.rename(staged.path, to: store.versionPath(staged.id))
        try writeRecord(record)
        Disk.synchronizeFileSystem(containing: store.versionPath(staged.id))
        try pointLiveLink(at: staged.id)
        live = record
        try collectGarbage()
        // Every planned download completed: nothing is left to resume.
        for partial in Disk.contentsOfDirectory(store.partialsPath) { try Disk.remove(store.partialsPath + "/" + partial) }
    }

    /// Writes a version's record beside its folder, atomically.
    func writeRecord(_ record: VersionRecord) throws {
        try Disk.writeAtomically(Data(record.jsonBytes), to: store.recordPath(record.id))
    }

    func pointLiveLink(at id: Int) throws {
        let linkParent = store.liveLink.deletingLastPathComponent().path
        let target = store.versionPath(id)
        // Relative when the store sits beside or below the link, so both can move together.
        let relative = target.hasPrefix(linkParent + "/") ? String(target.dropFirst(linkParent.count + 1)) : target
        try Disk.createDirectory(linkParent)
        try Disk.replaceSymbolicLink(at: store.liveLink.path, target: relative)
    }

    /// Removes every version but the live one and the one before it.
    func collectGarbage() throws {
        guard let liveID = store.liveVersionID else { return }
        let keep: Set<Int> = [liveID, try store.record(liveID).previous].compactMap { $0 }.reduce(into: []) { $0.insert($1) }
        for name in Disk.contentsOfDirectory(store.versionsPath) {
            guard let id = Int(name.split(separator: ".").first ?? ""), !keep.contains(id) else { continue }
            try Disk.remove(store.versionsPath + "/" + name)
        }
    }
}

/// A version being assembled in staging.
struct StagedVersion {
    let id: Int
    let path: String
    private var createdFolders: Set<String> = []

    init(id: Int, path: String) {
        self.id = id
        self.path = path
    }

    /// Moves a verified file into the tree at `bundlePath` (nothing to do when it was
    /// downloaded there).
    mutating func place(_ file: String, at bundlePath: BundlePath) throws {
        let destination = path + "/" + bundlePath.string
        guard file != destination else { return }
        try makeParent(of: bundlePath)
        try Disk.rename(file, to: destination)
    }

    /// Creates the folder `bundlePath` will be written in.
    mutating func prepareFolder(for bundlePath: BundlePath) throws {
        try makeParent(of: bundlePath)
    }

    /// Hard-links an unchanged file from another version (or a second path of one download).
    mutating func link(_ existing: String, at bundlePath: BundlePath) throws {
        try makeParent(of: bundlePath)
        try Disk.link(existing, to: path + "/" + bundlePath.string)
    }

    /// Writes bytes held in memory (a manifest) at `bundlePath`.
    mutating func write(_ data: Data, at bundlePath: BundlePath) throws {
        try makeParent(of: bundlePath)
        try Disk.writeAtomically(data, to: path + "/" + bundlePath.string)
    }

    private mutating func makeParent(of bundlePath: BundlePath) throws {
        guard let parent = bundlePath.parent?.string, !createdFolders.contains(parent) else { return }
        try Disk.createDirectory(path + "/" + parent)
        createdFolders.insert(parent)
    }
}
