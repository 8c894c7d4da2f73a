/// Every file of a version and what it was verified to be, sorted by path.
///
/// Sorted paths in a ``PathList`` and records in ``DigestsAndSizes`` (an unnamed file for a large
/// live version), not a dictionary: a version's table is held twice during an update, and per-entry
/// strings and hash slots made it the largest part of a large bundle's peak.
struct FileTable: Sendable, Hashable {
    /// One file.
    struct Entry: Sendable, Hashable {
        var path: String
        var record: FileRecord
    }

    /// The paths, in path order (``PathOrder``).
    private var paths = PathList()
    /// Each file's record, by position.
    private var records: DigestsAndSizes

    /// No files.
    init() { records = DigestsAndSizes() }

    /// No files yet; past `bufferFiles` files, their records go to an unnamed file in `folder`
    /// (see ``DigestsAndSizes``), and their paths' full pages to another (see ``PathList``),
    /// read back a page at a time: a lookup by path reads one page at most.
    init(spillingTo folder: String?, bufferFiles: Int = 1_600, pageSize: Int? = nil) {
        records = DigestsAndSizes(spillingTo: folder, bufferRecords: bufferFiles)
        paths = PathList(spillingTo: folder, bufferFiles: bufferFiles, pageSize: pageSize)
    }

    static func == (left: FileTable, right: FileTable) -> Bool {
        left.count == right.count && left.paths == right.paths
            && left.records.indices.allSatisfy { left.record(at: $0) == right.record(at: $0) }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(paths)
        for position in records.indices { hasher.combine(record(at: position)) }
    }

    /// The entries, in any order; of two for one path, the later one is kept (as assigning to a
    /// dictionary would).
    init(sorting entries: consuming [Entry]) {
        self.init()
        var entries = entries
        // Swift's sort is stable: of equal paths, the later entry stays later, and is kept.
        let inOrder = zip(entries, entries.dropFirst()).allSatisfy { PathOrder.compare($0.path, $1.path) <= 0 }
        if !inOrder { entries.sort { PathOrder.compare($0.path, $1.path) < 0 } }
        reserveCapacity(entries.count)
        for entry in entries { appendInOrder(entry) }
    }

    /// The files of a dictionary.
    init(_ files: [String: FileRecord]) {
        self.init(sorting: files.map { Entry(path: $0.key, record: $0.value) })
    }

    /// Adds `entry` after the others when its path sorts after theirs (or replaces the last
    /// entry, when it names the same path); answers `false`, changing nothing, when it sorts
    /// before.
    @discardableResult
    mutating func appendInOrder(_ entry: Entry) -> Bool {
        if let last = records.indices.last {
            let order = compare(last, entry.path)
            if order > 0 { return false }
            if order == 0 {
                paths.removeLast()
                records.removeLast()
            }
        }
        paths.append(entry.path.utf8)
        records.append(hash: entry.record.hash, size: entry.record.size)
        return true
    }

    /// Room for `files` more files' records.
    mutating func reserveCapacity(_ files: Int) {
        records.reserveCapacity(files)
        paths.reserveCapacity(files)
    }

    /// Gives back the room a table built by appending grew beyond its bytes.
    mutating func trimRoom() {
        paths.trimRoom()
        records.trimRoom()
    }

    var count: Int { records.count }
    /// Whether some records are in a file (see ``init(spillingTo:bufferFiles:)``).
    var isSpilled: Bool { records.isSpilled }
    var isEmpty: Bool { records.count == 0 }

    /// The files in path order, each made when read (its path is a new string).
    var entries: Entries { Entries(table: self) }

    /// The path of the file at `position`.
    func path(at position: Int) -> String { paths.string(at: position) }

    /// The UTF-8 bytes of the path of the file at `position`, read in place.
    func pathBytes(at position: Int) -> ArraySlice<UInt8> { paths.bytes(at: position) }

    /// The record of the file at `position`.
    func record(at position: Int) -> FileRecord {
        let (hash, size) = records[position]
        // A table's records have both. A size below zero (a damaged record read whole) reads
        // as -1: no file has it, so the file is fetched again.
        return FileRecord(hash: hash!, size: size ?? -1)
    }

    /// Whether the file at `position` has exactly `path`'s bytes (not only an equal string: a
    /// path in another Unicode normalization is equal, and spelled differently).
    func hasPath(at position: Int, spelledAs path: String) -> Bool {
        paths.bytes(at: position).elementsEqual(path.utf8)
    }

    /// Where `path` is, or `nil`.
    func index(of path: String) -> Int? {
        var key = path
        let low = key.withUTF8 { key in paths.partitioningIndex { PathOrder.compare($0, key) < 0 } }
        return low < count && compare(low, path) == 0 ? low : nil
    }

    /// Whether some paths' bytes are in a file.
    var arePathsSpilled: Bool { paths.isSpilled }

    /// The record of the file at `path`, or `nil`.
    subscript(path: String) -> FileRecord? { index(of: path).map(record(at:)) }

    /// The same files as a dictionary (for callers that want one; a sync never builds it).
    var dictionary: [String: FileRecord] {
        Dictionary(entries.lazy.map { ($0.path, $0.record) }, uniquingKeysWith: { $1 })
    }

    /// The path at `position` against `path` (``PathOrder``): negative, zero or positive.
    private func compare(_ position: Int, _ path: String) -> Int {
        var path = path
        return path.withUTF8 { PathOrder.compare(paths.bytes(at: position), $0) }
    }

    /// The files in path order, read by position.
    struct Entries: RandomAccessCollection, Sendable {
        let table: FileTable
        var startIndex: Int { 0 }
        var endIndex: Int { table.count }
        subscript(position: Int) -> Entry { Entry(path: table.path(at: position), record: table.record(at: position)) }
    }
}
