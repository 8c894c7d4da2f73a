/// The files a sync selected, and then those it downloads: a list of ``SelectedFile``s kept as
/// columns, the paths' bytes one after another.
///
/// Here a file is its path in a ``PathList`` (its own length and 4 bytes; its bytes in a file of
/// the update once they fill a page) and its digest and size (``DigestsAndSizes``: 41 bytes, in a
/// file of the update once the list is long), not a string per path. A file read from the list is
/// made when read: read a digest, a size or a path's order through the methods that do not make its
/// path.
struct SelectedFiles: RandomAccessCollection, ExpressibleByArrayLiteral, Sendable {
    private var paths = PathList()
    private var facts: DigestsAndSizes

    init() { facts = DigestsAndSizes() }

    /// An empty list whose digests and sizes go to an unnamed file in `folder` once it passes
    /// `bufferFiles` files (see ``DigestsAndSizes``), and its paths' bytes to another a page at a
    /// time (see ``PathList``). A page is as many bytes as the digests' buffer (64 KB), and
    /// never less than the longest path; tests that know their paths' lengths set `pageSize`.
    init(spillingTo folder: String?, bufferFiles: Int = 1_600, pageSize: Int? = nil) {
        facts = DigestsAndSizes(spillingTo: folder, bufferRecords: bufferFiles)
        paths = PathList(spillingTo: folder, bufferFiles: bufferFiles, pageSize: pageSize)
    }

    init(_ files: some Sequence<SelectedFile>) {
        self.init()
        for file in files { append(file) }
    }

    init(arrayLiteral files: SelectedFile...) { self.init(files) }

    var startIndex: Int { 0 }
    var endIndex: Int { facts.count }

    /// Whether some digests and sizes are in the update's file (see ``init(spillingTo:bufferFiles:)``).
    var isSpilled: Bool { facts.isSpilled }

    /// How many times a block of digests and sizes was read from the update's file.
    var blocksRead: Int { facts.blocksRead }

    /// Whether some paths' bytes are in the update's file.
    var arePathsSpilled: Bool { paths.isSpilled }

    subscript(position: Int) -> SelectedFile {
        let (hash, size) = facts[position]
        return SelectedFile(path: path(at: position), hash: hash, size: size)
    }

    /// The path of the file at `position` (a new string).
    func path(at position: Int) -> BundlePath { BundlePath(trusted: paths.string(at: position)) }

    /// The paths, shared rather than copied.
    var pathList: PathList { paths }

    /// The UTF-8 bytes of the path of the file at `position`, read in place.
    func pathBytes(at position: Int) -> ArraySlice<UInt8> { paths.bytes(at: position) }

    func hash(at position: Int) -> ContentHash? { facts[position].hash }

    func size(at position: Int) -> Int64? { facts[position].size }

    /// Whether the path at `left` sorts before the one at `right` (``BundlePath``'s byte order).
    func pathPrecedes(_ left: Int, _ right: Int) -> Bool {
        paths.bytes(at: left).lexicographicallyPrecedes(paths.bytes(at: right))
    }

    mutating func append(_ file: SelectedFile) {
        paths.append(file.path.string.utf8)
        facts.append(hash: file.hash, size: file.size)
    }

    /// Room for `count` more files.
    mutating func reserveCapacity(_ count: Int) {
        paths.reserveCapacity(count)
        facts.reserveCapacity(count)
    }

    /// Removes, in place and in order, the files `remove` answers `true` for; it is asked once
    /// for each file, first to last.
    mutating func removeAll(where remove: (SelectedFile) throws -> Bool) rethrows {
        let keep = try indices.map { try !remove(self[$0]) }
        paths.keep(keep)
        facts.keep(keep)
    }

    /// Gives back the room a list that lost most of its files still holds.
    mutating func trimRoom() {
        paths.trimRoom()
        facts.trimRoom()
    }
}
