/// Paths held as their UTF-8 bytes one after another, read by position: how a version's table,
/// a plan's files and the set of names a tree has hold their paths.
///
/// A Swift `String` longer than 15 bytes is 64 bytes of heap of its own, beside the 16 its holder
/// keeps, and a sync held several lists of them; here a path is its own length and 4 bytes.
///
/// The bytes are kept in pages of 64 KB that never move once full, since an array grown by
/// appending holds up to three times its bytes while it moves. A path never spans two pages (paths
/// are at most 1,024 bytes); the first page grows as an array does, so a short list stays short.
struct PathList: PathsAsBytes, Sendable {
    /// The bytes, a page at a time; a page is full when the next path would not fit in it.
    /// Pages `0..<spilledPages.count` are empty here: their bytes are in `spilled`.
    private var pages: [[UInt8]] = []
    /// Where each path ends, counting every page before its own as `pageSize` bytes long.
    private var ends: [UInt32] = []
    /// The most bytes a page holds (64 KB; tests make it small).
    private let pageSize: Int
    /// Makes the file full pages go to; `nil` keeps every page in memory.
    private var makeFile: PageFileMaker?
    /// The full pages written to a file, and each one's length and first path.
    private var spilled: SpilledPages?
    private var spilledPages: [SpilledPage] = []

    /// A page in the file: its length, and its first path's place and bytes, which let a search
    /// of a sorted list pick the one page to read (``partitioningIndex(where:)``).
    private struct SpilledPage {
        var length: Int
        var firstIndex: Int
        var firstPath: [UInt8]
    }

    init(pageSize: Int = 1 << 16) { self.pageSize = pageSize }

    /// An empty list whose full pages go to a file `makeFile` makes, and are read back from
    /// it (``SpilledPages``); when it makes none, or one fails a write, they stay in memory.
    ///
    /// Only the ends of the paths stay, 4 bytes each: a plan's paths are held from the walk of the
    /// manifests to the end of the sync.
    init(pageSize: Int = 1 << 16, spillingWith makeFile: PageFileMaker?) {
        self.pageSize = pageSize
        self.makeFile = makeFile
    }

    init(_ paths: [String]) {
        self.init()
        for path in paths { append(path.utf8) }
    }

    /// Whether some pages are in a file (for tests and measurements).
    var isSpilled: Bool { !spilledPages.isEmpty }

    var count: Int { ends.count }

    /// The first index whose path `precedes` is `false` for, in a list where it is `true` for
    /// the paths before some index and `false` from there (a sorted list, asked whether each
    /// path sorts before a key): a binary search that reads at most one page from the file,
    /// picked by the first paths of the pages there, which are kept in memory.
    func partitioningIndex(where precedes: (ArraySlice<UInt8>) -> Bool) -> Int {
        let page = spilledPages.indices.firstPosition { !precedes(spilledPages[$0].firstPath[...]) }
        let low = page == 0 ? 0 : spilledPages[page - 1].firstIndex
        let high = page < spilledPages.count ? spilledPages[page].firstIndex : count
        return (low..<high).firstPosition { !precedes(bytes(at: $0)) }
    }

    /// The UTF-8 bytes of the path at `index`, read in place.
    func bytes(at index: Int) -> ArraySlice<UInt8> {
        let (start, end) = (start(of: index), Int(ends[index]))
        guard end > start else { return [] }
        let page = start / pageSize
        let range = (start - page * pageSize)..<(end - page * pageSize)
        guard page < spilledPages.count else { return pages[page][range] }
        return spilled!.page(page, length: spilledPages[page].length)[range]
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
            spillFullPages()
        }
        if length > 0 { pages[pages.count - 1].append(contentsOf: path) }
        ends.reserveGently(1)
        // A path of no bytes ends where the one before it does, whichever page is the last.
        let end = length == 0 ? Int(ends.last ?? 0) : (pages.count - 1) * pageSize + pages[pages.count - 1].count
        precondition(end <= UInt32.max, "more than 4 GB of paths")
        ends.append(UInt32(end))
    }

    mutating func removeLast() {
        let start = start(of: ends.count - 1)
        guard Int(ends.removeLast()) > start else { return }
        // The last path with bytes is on the last page that has any: the last written to the
        // file, when the page after it was emptied before (see below).
        let page = start / pageSize
        if page < spilledPages.count { takeBackLastSpilledPage() }
        pages.removeSubrange((page + 1)...)
        pages[page].removeSubrange((start - page * pageSize)...)
        // An emptied page after pages in the file stays, as the page the next path goes to.
        if pages[page].isEmpty, spilledPages.isEmpty || page > spilledPages.count { pages.removeLast() }
    }

    /// Keeps, in order, the paths whose `keep` is `true` (one for each path): in place when
    /// every page is in memory, else in a new list with a file of its own, so that a write that
    /// fails half-way loses nothing.
    mutating func keep(_ keep: [Bool]) {
        precondition(keep.count == count)
        guard isSpilled else { return keepInPlace(keep) }
        var kept = PathList(pageSize: pageSize, spillingWith: makeFile)
        for index in ends.indices where keep[index] { kept.append(bytes(at: index)) }
        self = kept
    }

    /// ``keep(_:)`` for pages in memory. The kept paths land where appending them to an empty
    /// list would put them: each no later than where it was, so none is written over before it
    /// is read.
    private mutating func keepInPlace(_ keep: [Bool]) {
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

    /// Writes the full pages still in memory (all but the last) to the file, making it first;
    /// when it cannot, keeps every page in memory from here on.
    private mutating func spillFullPages() {
        guard let makeFile else { return }
        while spilledPages.count < pages.count - 1 {
            makeUnique()
            if spilled == nil { spilled = makeFile().map { SpilledPages(file: $0, pageSize: pageSize) } }
            let number = spilledPages.count
            guard let spilled, spilled.write(pages[number], number: number) else {
                self.makeFile = nil
                return
            }
            // A page starts with a path of some bytes: a new page is begun only for one.
            let first = ends.indices.firstPosition { Int(ends[$0]) > number * pageSize }
            let firstPath = Array(pages[number][..<(Int(ends[first]) - number * pageSize)])
            spilledPages.append(SpilledPage(length: pages[number].count, firstIndex: first, firstPath: firstPath))
            pages[number] = []
        }
    }

    /// Brings the last page written to the file back to memory, to be changed.
    private mutating func takeBackLastSpilledPage() {
        makeUnique()
        guard let spilled, let last = spilledPages.popLast() else { return }
        pages[spilledPages.count] = spilled.page(spilledPages.count, length: last.length)
    }

    /// A file shared with a copy of this list is not written to: its pages come back to memory,
    /// to go to a file of this list's own.
    private mutating func makeUnique() {
        guard spilled != nil, !isKnownUniquelyReferenced(&spilled) else { return }
        for number in spilledPages.indices {
            pages[number] = spilled!.page(number, length: spilledPages[number].length)
        }
        (spilled, spilledPages) = (nil, [])
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
