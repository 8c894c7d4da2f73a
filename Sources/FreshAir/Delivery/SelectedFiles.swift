/// The files a sync selected, and then those it downloads: a list of ``SelectedFile``s kept as
/// columns, the paths' bytes one after another.
///
/// An array of selected files held each path as a `String` of its own, 64 bytes beside the
/// file's 64 for any path longer than 15 bytes: 12.8 MB at the peak of a first sync of 100,000
/// files (`heaptrack`, 2026-11-27). Here a file is its path's own length, 4 bytes where it
/// ends, its digest (40) and its size (8). A file read from the list is made when read: read a
/// digest, a size or a path's order through the methods that do not make its path.
struct SelectedFiles: RandomAccessCollection, ExpressibleByArrayLiteral, Sendable {
    /// The paths' UTF-8 bytes, one after another.
    private var pathBytes: [UInt8] = []
    /// Where each path ends in ``pathBytes``.
    private var pathEnds: [UInt32] = []
    private var hashes: [ContentHash?] = []
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
        SelectedFile(path: path(at: position), hash: hashes[position], size: size(at: position))
    }

    /// The path of the file at `position` (a new string).
    func path(at position: Int) -> BundlePath {
        BundlePath(trusted: String(decoding: pathBytes(at: position), as: UTF8.self))
    }

    /// The UTF-8 bytes of the path of the file at `position`, read in place.
    func pathBytes(at position: Int) -> ArraySlice<UInt8> {
        pathBytes[(position == 0 ? 0 : Int(pathEnds[position - 1]))..<Int(pathEnds[position])]
    }

    func hash(at position: Int) -> ContentHash? { hashes[position] }

    func size(at position: Int) -> Int64? { sizes[position] >= 0 ? sizes[position] : nil }

    /// Whether the path at `left` sorts before the one at `right` (``BundlePath``'s byte order).
    func pathPrecedes(_ left: Int, _ right: Int) -> Bool {
        pathBytes(at: left).lexicographicallyPrecedes(pathBytes(at: right))
    }

    mutating func append(_ file: SelectedFile) {
        pathBytes.append(contentsOf: file.path.string.utf8)
        precondition(pathBytes.count <= UInt32.max, "a selection's paths are more than 4 GB")
        pathEnds.append(UInt32(pathBytes.count))
        hashes.append(file.hash)
        sizes.append(file.size ?? -1)
    }

    /// Room for `count` more files.
    mutating func reserveCapacity(_ count: Int) {
        pathEnds.reserveCapacity(pathEnds.count + count)
        hashes.reserveCapacity(hashes.count + count)
        sizes.reserveCapacity(sizes.count + count)
    }

    /// Removes, in place and in order, the files `remove` answers `true` for; it is asked once
    /// for each file, first to last.
    mutating func removeAll(where remove: (SelectedFile) throws -> Bool) rethrows {
        // Files move down, never over one not read yet: `kept <= position`, `keptBytes <= start`.
        var (kept, keptBytes, start) = (0, 0, 0)
        for position in indices {
            let end = Int(pathEnds[position])
            defer { start = end }
            let path = BundlePath(trusted: String(decoding: pathBytes[start..<end], as: UTF8.self))
            guard try !remove(SelectedFile(path: path, hash: hashes[position], size: size(at: position))) else {
                continue
            }
            for offset in 0..<(end - start) { pathBytes[keptBytes + offset] = pathBytes[start + offset] }
            keptBytes += end - start
            pathEnds[kept] = UInt32(keptBytes)
            hashes[kept] = hashes[position]
            sizes[kept] = sizes[position]
            kept += 1
        }
        pathBytes.removeSubrange(keptBytes...)
        pathEnds.removeSubrange(kept...)
        hashes.removeSubrange(kept...)
        sizes.removeSubrange(kept...)
    }

    /// Gives back the room a list that lost most of its files still holds.
    mutating func trimRoom() {
        pathBytes.trimRoom()
        pathEnds.trimRoom()
        hashes.trimRoom()
        sizes.trimRoom()
    }
}
