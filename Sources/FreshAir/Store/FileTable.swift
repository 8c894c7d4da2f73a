/// Every file of a version and what it was verified to be, in one array sorted by path.
///
/// A record's files were a `[String: FileRecord]`. A hash table of 100,000 entries has 262,144
/// slots of 64 bytes (it keeps a quarter of them free and grows by doubling): 16.8 MB, held
/// once for the live version and once more for the new one during an update of a large bundle
/// (`heaptrack`, 2026-11-27). A sorted array holds the same entries in 6.4 MB, is written to disk
/// in order without sorting its keys again, and finds a path by binary search.
struct FileTable: Sendable, Hashable {
    /// One file.
    struct Entry: Sendable, Hashable {
        var path: String
        var record: FileRecord
    }

    /// Sorted by path (`String`'s `<`), one entry per path.
    private(set) var entries: [Entry]

    /// No files.
    init() { entries = [] }

    /// The entries, in any order; of two for one path, the later one is kept (as assigning to a
    /// dictionary would). `entries` is sorted in place, not copied.
    init(sorting entries: consuming [Entry]) {
        var entries = entries
        // Swift's sort is stable: of equal paths, the later entry stays later, and is kept.
        if !entries.isSorted(by: \.path) { entries.sort { $0.path < $1.path } }
        var kept = 0
        for index in entries.indices {
            if kept > 0, entries[kept - 1].path == entries[index].path {
                entries[kept - 1] = entries[index]
            } else {
                entries.swapAt(kept, index)
                kept += 1
            }
        }
        entries.removeLast(entries.count - kept)
        self.entries = entries
    }

    /// The files of a dictionary.
    init(_ files: [String: FileRecord]) {
        self.init(sorting: files.map { Entry(path: $0.key, record: $0.value) })
    }

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    /// Where `path` is in ``entries``, or `nil`.
    func index(of path: String) -> Int? {
        var (low, high) = (0, entries.count)
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].path < path { low = middle + 1 } else { high = middle }
        }
        return low < entries.count && entries[low].path == path ? low : nil
    }

    /// The record of the file at `path`, or `nil`.
    subscript(path: String) -> FileRecord? { index(of: path).map { entries[$0].record } }

    /// The same files as a dictionary (for callers that want one; a sync never builds it).
    var dictionary: [String: FileRecord] {
        Dictionary(entries.lazy.map { ($0.path, $0.record) }, uniquingKeysWith: { $1 })
    }
}

extension Array {
    /// Whether the elements are in non-decreasing order of `key`.
    fileprivate func isSorted<Key: Comparable>(by key: (Element) -> Key) -> Bool {
        var previous: Key?
        for element in self {
            let current = key(element)
            if let previous, current < previous { return false }
            previous = current
        }
        return true
    }
}
