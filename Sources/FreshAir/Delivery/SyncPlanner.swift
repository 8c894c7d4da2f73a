import Foundation

/// A file the environment selects, from any manifest in the tree.
///
/// 72 bytes: a plan holds one per file (7.2 MB at 100,000). A manifest's bytes, which only a few
/// files have, are beside the list (``SelectedDocument``), not a field of each.
struct SelectedFile: Sendable {
    var path: BundlePath
    /// The digest its manifest lists; `nil` when existence is enough.
    var hash: ContentHash?
    /// The size its manifest lists, or -1: an `Int64?` would make each of a plan's files 72
    /// bytes instead of 64 (manifests refuse negative sizes).
    private var storedSize: Int64

    var size: Int64? {
        get { storedSize >= 0 ? storedSize : nil }
        set { storedSize = newValue ?? -1 }
    }

    init(path: BundlePath, hash: ContentHash?, size: Int64?) {
        precondition(size ?? 0 >= 0, "a manifest's size is never negative")
        self.path = path
        self.hash = hash
        self.storedSize = size ?? -1
    }
}

extension SelectedFile {
    /// The selected file a live one stands for when a manifest names it exactly as it is.
    init(live entry: FileTable.Entry) {
        self.init(path: BundlePath(trusted: entry.path), hash: entry.record.hash, size: entry.record.size)
    }
}

/// A manifest of the tree whose bytes the walk already has, by its path.
struct SelectedDocument: Sendable {
    var data: Data
    /// The bytes came over the network in this sync (not from the live version).
    var fetched: Bool
}

/// A file a device would have, as ``BundleSync/selection()`` and
/// `LocalBundle/selection(folder:environment:maxDepth:)` report it.
package struct SelectedEntry: Sendable, Hashable, Codable {
    /// The file's path in the bundle.
    package var path: String
    /// Bytes, when the manifest declares them (or the file is at hand).
    package var size: Int64?
    /// Hex digest, when the manifest lists one.
    package var hash: String?

    /// An entry at `path`, with its size and digest (hex) when known.
    package init(path: String, size: Int64?, hash: String?) {
        self.path = path
        self.size = size
        self.hash = hash
    }
}

/// What to do to turn the live version into the one a manifest tree selects. Each selected
/// file is in exactly one list: a plan of 100,000 files holds each of them once.
struct SyncPlan {
    /// Live files carried over unchanged: where, and what they were verified to be.
    var kept = KeptFiles()
    /// Bytes already in memory (manifests), written as they are.
    var written: [(file: SelectedFile, data: Data, record: FileRecord, fetched: Bool)] = []
    /// Bytes already on disk (a large root manifest, spilled to the update's partials): moved
    /// into the version.
    var placed: [(file: SelectedFile, from: String, record: FileRecord)] = []
    /// Files to fetch from the server, in the order selected.
    var downloads = SelectedFiles()
    /// Live paths no longer selected.
    var removed: [String] = []

    /// Nothing to fetch, write or remove: the live version is already this one.
    var changesNothing: Bool { removed.isEmpty && written.isEmpty && placed.isEmpty && downloads.isEmpty }

    /// Moves the manifests' bytes out of ``written`` into a list that is let go once written:
    /// at 100,000 entries the root manifest is 14 MB, held through every download otherwise.
    mutating func handOverDocuments() -> Handover<[(path: BundlePath, data: Data)]> {
        let documents = written.map { (path: $0.file.path, data: $0.data) }
        for index in written.indices { written[index].data = Data() }
        return Handover(documents)
    }

    var summary: SyncPlanSummary {
        SyncPlanSummary(
            filesToDownload: downloads.count,
            filesToKeep: kept.count + written.count + placed.count,
            filesToRemove: removed.count,
            // Summed as read: an array of the sizes first was 3.2 MB at 200,000 files, the
            // heap's peak of a first sync.
            bytesToDownload: downloads.indices.lazy.map { downloads.size(at: $0) }.knownTotal()
        )
    }
}

/// A value handed to one taker and let go by everyone else: whoever takes it holds the only
/// reference, so it is freed as soon as the taker is done with it (the selected files once
/// planned, the manifests' bytes once written to the staged folder), and changed in place
/// without a copy.
///
/// Unchecked `Sendable`: taken once, by one thread.
final class Handover<Value: Sendable>: @unchecked Sendable {
    private var value: Value?

    init(_ value: Value) { self.value = value }

    func take() -> Value {
        guard let taken = value else { preconditionFailure("a handover is taken once") }
        value = nil
        return taken
    }
}

/// Decides, without I/O of its own, which files to keep, write, download and remove.
///
/// A file is kept when the live version has it with the same digest (or, for an entry
/// without one, at all) and it is still intact on disk; `isIntact` is the caller's cheap
/// check (size) so that a damaged file is fetched again instead of trusted.
enum SyncPlanner {
    /// - Parameters:
    ///   - documents: manifests whose bytes are in memory, by path: kept when the live version
    ///     has the same, else written.
    ///   - onDisk: files whose verified bytes are already on disk, by path, at the given place
    ///     (a spilled root manifest): kept when the live version has them, else placed.
    ///   - sameAsLive: selected files named exactly as the live version has them, as places in
    ///     its table (``ManifestTree/Selection/sameAsLive``): planned as the selected file each
    ///     stands for.
    static func plan(
        selected: consuming SelectedFiles,
        sameAsLive: [Int32] = [],
        documents: [BundlePath: SelectedDocument] = [:],
        live: VersionRecord?,
        onDisk: [BundlePath: String] = [:],
        isIntact: (String, FileRecord) -> Bool
    ) -> SyncPlan {
        var plan = SyncPlan()
        let table = live?.fileTable ?? FileTable()
        // Sized once: a list of 100,000 that grows by doubling holds one and a half copies on the
        // way (an update of a 100,000-file bundle peaked there).
        var kept: [Int32] = []
        var respelled: [Int32: BundlePath] = [:]
        if !table.isEmpty { kept.reserveCapacity(min(selected.count + sameAsLive.count, table.count)) }
        // Which live files are selected again, by their place in the table: the others are removed.
        var selectedAgain = [Bool](repeating: false, count: table.count)
        /// Keeps the live file at `position` as `file`, the manifest's spelling of its name.
        func keep(_ position: Int, as file: SelectedFile) {
            kept.append(Int32(position))
            if !table.hasPath(at: position, spelledAs: file.path.string) {
                respelled[Int32(position)] = file.path
            }
        }
        /// Keeps, writes or places `file`, which is at `position` in the live table if there;
        /// answers whether it is to be downloaded instead.
        func isDownload(_ file: SelectedFile, at position: Int?) -> Bool {
            if let position { selectedAgain[position] = true }
            let intact = position.map { isIntact(file.path.string, table.record(at: $0)) } ?? false
            let existing = intact ? table.record(at: position!) : nil
            if let document = documents[file.path] {
                let contents = document.data
                let record = FileRecord(hash: file.hash ?? .of(contents, using: .sha256), size: Int64(contents.count))
                if let existing, existing.hash == record.hash {
                    keep(position!, as: file)
                } else {
                    plan.written.append((file, contents, record, document.fetched))
                }
            } else if let from = onDisk[file.path], let hash = file.hash, let size = file.size {
                if let existing, existing.hash == hash {
                    keep(position!, as: file)
                } else {
                    plan.placed.append((file, from, FileRecord(hash: hash, size: size)))
                }
            } else if let existing, file.hash == nil || file.hash == existing.hash,
                file.size == nil || file.size == existing.size
            {
                keep(position!, as: file)
            } else {
                return true
            }
            return false
        }
        // The downloads are the selected list itself, compacted in place as it is read: a first
        // install of 100,000 files does not hold a second list of them (7 MB).
        selected.removeAll { !isDownload($0, at: table.index(of: $0.path.string)) }
        // Each file the live version has as selected stands for the selected file it is; it is
        // downloaded only when its copy is damaged.
        for place in sameAsLive {
            let file = SelectedFile(live: table.entries[Int(place)])
            if isDownload(file, at: Int(place)) { selected.append(file) }
        }
        // An update of ten files out of 100,000 would otherwise hold room for all of them.
        selected.trimRoom()
        plan.downloads = selected
        plan.kept = KeptFiles(table, at: kept, respelled: respelled)
        // The table is sorted by path, and so is the list of removed paths.
        plan.removed = selectedAgain.indices.filter { !selectedAgain[$0] }.map { table.path(at: $0) }
        return plan
    }
}
