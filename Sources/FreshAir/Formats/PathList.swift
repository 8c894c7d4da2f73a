/// Paths held as their UTF-8 bytes one after another, read by position: how a version's table,
/// a plan's files and the set of names a tree has hold their paths.
///
/// A Swift `String` longer than 15 bytes is 64 bytes of heap of its own, beside the 16 its
/// holder keeps: at 100,000 files every list that held a string per path cost 8 MB, and a sync
/// held several (`heaptrack`, 2026-11-27). Here a path is its own length and 4 bytes.
///
/// The bytes are kept in pages of 64 KB that never move once full: a list of 100,000 paths
/// built by appending to one array held up to twice its bytes, and three times while it moved
/// to a larger one, at the moment a sync's heap peaked (`heaptrack`, 2026-11-27). A path never
/// spans two pages (paths are at most 1,024 bytes); the first page grows as an array does, so a
/// short list stays short.
struct PathList: PathsAsBytes, Sendable {
    /// The bytes, a page at a time; a page is full when the next path would not fit in it.
    private var pages: [[UInt8]] = []
    /// Where each path ends, counting every page before its own as `pageSize` bytes long.
    private var ends: [UInt32] = []
    /// The most bytes a page holds (64 KB; tests make it small).
    private let pageSize: Int

    init(pageSize: Int = 1 << 16) { self.pageSize = pageSize }

    init(_ paths: [String]) {
        self.init()
        for path in paths { append(path.utf8) }
    }

    var count: Int { ends.count }

    /// The UTF-8 bytes of the path at `index`, read in place.
    func bytes(at index: Int) -> ArraySlice<UInt8> {
        let (start, end) = (start(of: index), Int(ends[index]))
        guard end > start else { return [] }
        let page = start / pageSize
        return pages[page][(start - page * pageSize)..<(end - page * pageSize)]
    }

    /// The path at `index`, as a string made now.
    func string(at index: Int) -> String { String(decoding: bytes(at: index), as: UTF8.self) }

    /// Adds the path whose UTF-8 bytes are `path`.
    mutating func append(_ path: some Collection<UInt8>) {
        let length = path.count
        precondition(length <= pageSize, "a path longer than a page")
        if length > 0, pages.isEmpty || pages[pages.count - 1].count + length > pageSize {
            var page: [UInt8] = []
            // Pages after the first are full pages: reserved once, never moved.
            if !pages.isEmpty { page.reserveCapacity(pageSize) }
            pages.append(page)
        }
        if length > 0 { pages[pages.count - 1].append(contentsOf: path) }
        ends.reserveGently(1)
        let end = pages.isEmpty ? 0 : (pages.count - 1) * pageSize + pages[pages.count - 1].count
        precondition(end <= UInt32.max, "more than 4 GB of paths")
        ends.append(UInt32(end))
    }

    mutating func removeLast() {
        let start = start(of: ends.count - 1)
        guard Int(ends.removeLast()) > start else { return }
        // The last path with bytes is on the last page.
        pages[pages.count - 1].removeSubrange((start - (pages.count - 1) * pageSize)...)
        if pages[pages.count - 1].isEmpty { pages.removeLast() }
    }

    /// Keeps, in order and in place, the paths whose `keep` is `true` (one for each path).
    ///
    /// The kept paths land where appending them to an empty list would put them: each no later
    /// than where it was, so none is written over before it is read.
    mutating func keep(_ keep: [Bool]) {
        precondition(keep.count == count)
        var (kept, page, fill) = (0, 0, 0)  // the next path's place: page `page`, byte `fill`
        var started = false  // whether `page` holds a kept path yet
        for index in ends.indices where keep[index] {
            let (start, end) = (start(of: index), Int(ends[index]))
            let length = end - start
            if length > 0 {
                if started, fill + length > pageSize { (page, fill) = (page + 1, 0) }
                started = true
                let from = start / pageSize
                for offset in 0..<length {
                    let byte = pages[from][start - from * pageSize + offset]
                    if fill + offset < pages[page].count {
                        pages[page][fill + offset] = byte
                    } else {
                        pages[page].append(byte)
                    }
                }
                fill += length
            }
            ends[kept] = UInt32(page * pageSize + fill)
            kept += 1
        }
        ends.removeSubrange(kept...)
        if started {
            pages[page].removeSubrange(fill...)
            pages.removeSubrange((page + 1)...)
        } else {
            pages.removeAll()
        }
    }

    /// Room for `count` more paths.
    mutating func reserveCapacity(_ count: Int) { ends.reserveCapacity(ends.count + count) }

    /// Gives back the room a list built by appending grew beyond its paths.
    mutating func trimRoom() {
        if !pages.isEmpty { pages[pages.count - 1].trimRoom() }
        ends.trimRoom()
    }

    /// Where the path at `index` starts: where the one before it ends, or at the start of the
    /// next page when it did not fit in that one.
    private func start(of index: Int) -> Int {
        guard index > 0 else { return 0 }
        let end = Int(ends[index])
        let previous = Int(ends[index - 1])
        guard end > previous else { return end }
        return Swift.max(previous, (end - 1) / pageSize * pageSize)
    }
}
