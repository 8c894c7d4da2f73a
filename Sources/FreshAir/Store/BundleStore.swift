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

    /// A random identifier for this install, created on first use and kept in the store
    /// (`install-id`); ``RolloutBucket`` derives from it. Two processes asking at once get the same.
    public func installID() throws -> String {
        let path = root.appendingPathComponent("install-id").path
        if let text = FileManager.default.contents(atPath: path).map({ String(decoding: $0, as: UTF8.self) }), !text.isEmpty {
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        try Disk.createDirectory(root.path)
        // Written whole beside it, then linked in: the first link wins, and nobody reads half an ID.
        let candidate = path + ".\(UUID().uuidString)"
        try Disk.writeAtomically(Data(UUID().uuidString.utf8), to: candidate)
        defer { try? Disk.remove(candidate) }
        if link(candidate, path) != 0, errno != EEXIST { throw Disk.failure("create", path) }
        return String(decoding: try Disk.read(path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Tells the store the live version works: call it once the app has used new content
    /// successfully. A version that is never confirmed is rolled back by
    /// ``rollBackIfUnconfirmed(allowedLaunches:)``.
    public func confirmLive() async throws {
        try await update { update in
            guard var record = update.live, record.metadata[RecordKey.confirmed] == nil else { return }
            record.metadata[RecordKey.confirmed] = "true"
            record.metadata[RecordKey.launches] = nil
            try update.writeRecord(record)
        }
    }

    /// Confirm-or-roll-back, for apps that adopt it: call at launch, before reading content.
    /// Each call counts a launch of an unconfirmed live version; once it has been launched
    /// `allowedLaunches` times without ``confirmLive()`` (the app crashed or found the content
    /// unusable), the previous version goes live again and the failed content is remembered,
    /// so syncs do not install it again until something new is published.
    ///
    /// - Returns: the version now live after a rollback, or `nil` when nothing was rolled back
    ///   (confirmed, still within its launches, or nothing earlier to go back to).
    @discardableResult
    public func rollBackIfUnconfirmed(allowedLaunches: Int = 1) async throws -> VersionRecord? {
        try await update { (update: inout StoreUpdate) -> VersionRecord? in
            guard var record = update.live, record.metadata[RecordKey.confirmed] == nil else { return nil }
            let launches = Int(record.metadata[RecordKey.launches] ?? "") ?? 0
            guard launches >= allowedLaunches, let previousID = record.previous, Disk.isDirectory(versionPath(previousID)) else {
                record.metadata[RecordKey.launches] = String(launches + 1)
                try update.writeRecord(record)
                return nil
            }
            if let root = record.files["manifest.json"]?.hash {
                var rejected = try rejectedContent()
                rejected.insert(RejectedContent(source: record.source, digest: root.hex))
                try Disk.writeAtomically(Data(JSONValue.array(rejected.sorted().map(\.json)).serializedBytes()), to: rejectedPath)
            }
            try update.pointLiveLink(at: previousID)
            try update.collectGarbage()
            var previous = try self.record(previousID)
            // The version gone back to worked before: it needs no confirmation now.
            previous.metadata[RecordKey.confirmed] = "true"
            try update.writeRecord(previous)
            return previous
        }
    }

    /// Root manifests of versions rolled back by ``rollBackIfUnconfirmed(allowedLaunches:)``.
    struct RejectedContent: Hashable, Comparable {
        var source: String
        /// SHA-256 of the root manifest, hex.
        var digest: String

        var json: JSONValue { .object([("source", .string(source)), ("digest", .string(digest))]) }
        static func < (a: Self, b: Self) -> Bool { (a.source, a.digest) < (b.source, b.digest) }
    }

    var rejectedPath: String { root.appendingPathComponent("rejected.json").path }

    func rejectedContent() throws -> Set<RejectedContent> {
        guard let data = FileManager.default.contents(atPath: rejectedPath) else { return [] }
        do {
            let items = try JSONReader.parse(data).array ?? []
            return Set(items.compactMap { item in
                item["source"]?.string.flatMap { source in item["digest"]?.string.map { RejectedContent(source: source, digest: $0) } }
            })
        } catch {
            throw FreshAirError.fileSystem(operation: "read", path: rejectedPath, reason: "\(error)")
        }
    }

    /// Keys of ``VersionRecord/metadata`` for confirm-or-roll-back.
    enum RecordKey {
        static let confirmed = "confirmed"
        static let launches = "launches"
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
