/// The files a sync selected, and then those it downloads: a list of ``SelectedFile``s kept as
/// columns, the paths' bytes one after another.
///
/// An array of selected files held each path as a `String` of its own, 64 bytes beside the
/// file's 64 for any path longer than 15 bytes: 12.8 MB at the peak of a first sync of 100,000
/// files (`heaptrack`, 2026-11-27). Here a file is its path in a ``PathList`` (its own length
/// and 4 bytes), its digest (32, and a byte for its algorithm) and its size (8). A file read from the list is made when read: read a
/// digest, a size or a path's order through the methods that do not make its path.
struct SelectedFiles: RandomAccessCollection, ExpressibleByArrayLiteral, Sendable {
    private var paths = PathList()
    /// Digests' words (zero where the manifest gives none), and their algorithms: a
    /// `[ContentHash?]` took 40 bytes a file (an optional algorithm is one byte).
    private var digests: [ContentHash.Words] = []
    private var algorithms: [ContentHash.Algorithm?] = []
    /// Sizes, -1 where the manifest gives none.
    private var sizes: [Int64] = []

    init() {}

    init(_ files: some Sequence<SelectedFile>) {
        for file in files { append(file) }
    }

    init(arrayLiteral files: SelectedFile...) { self.init(files) }

    var startIndex: Int { 0 }
    var endIndex: Int { sizes.count }

    subscript(position: Int) -> SelectedFile {
        SelectedFile(path: path(at: position), hash: hash(at: position), size: size(at: position))
    }

    /// The path of the file at `position` (a new string).
    func path(at position: Int) -> BundlePath { BundlePath(trusted: paths.string(at: position)) }

    /// The paths, shared rather than copied.
    var pathList: PathList { paths }

    /// The UTF-8 bytes of the path of the file at `position`, read in place.
    func pathBytes(at position: Int) -> ArraySlice<UInt8> { paths.bytes(at: position) }

    func hash(at position: Int) -> ContentHash? {
        algorithms[position].map { ContentHash(algorithm: $0, words: digests[position]) }
    }

    func size(at position: Int) -> Int64? { sizes[position] >= 0 ? sizes[position] : nil }

    /// Whether the path at `left` sorts before the one at `right` (``BundlePath``'s byte order).
    func pathPrecedes(_ left: Int, _ right: Int) -> Bool {
        paths.bytes(at: left).lexicographicallyPrecedes(paths.bytes(at: right))
    }

    mutating func append(_ file: SelectedFile) {
        paths.append(file.path.string.utf8)
        digests.append(file.hash?.digestWords ?? (0, 0, 0, 0))
        algorithms.append(file.hash?.algorithm)
        sizes.append(file.size ?? -1)
    }

    /// Room for `count` more files.
    mutating func reserveCapacity(_ count: Int) {
        paths.reserveCapacity(count)
        digests.reserveCapacity(digests.count + count)
        algorithms.reserveCapacity(algorithms.count + count)
        sizes.reserveCapacity(sizes.count + count)
    }

    /// Removes, in place and in order, the files `remove` answers `true` for; it is asked once
    /// for each file, first to last.
    mutating func removeAll(where remove: (SelectedFile) throws -> Bool) rethrows {
        let keep = try indices.map { try !remove(self[$0]) }
        paths.keep(keep)
        digests.keep(keep)
        algorithms.keep(keep)
        sizes.keep(keep)
    }

    /// Gives back the room a list that lost most of its files still holds.
    mutating func trimRoom() {
        paths.trimRoom()
        digests.trimRoom()
        algorithms.trimRoom()
        sizes.trimRoom()
    }
}
