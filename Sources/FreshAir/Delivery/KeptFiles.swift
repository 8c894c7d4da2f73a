/// The live files an update carries over unchanged, in path order: their places in the live
/// version's table, which already holds each one's path and record.
///
/// A list of each kept file's path and record was 64 bytes a file beside the live table that
/// held the same: 6.4 MB for an update of 10 files in 100,000. A place is 4 bytes.
struct KeptFiles: RandomAccessCollection, Sendable {
    private let table: FileTable
    /// Places in `table`, ascending: so the files are in path order.
    private let places: [Int32]
    /// The manifest's spelling of a kept file whose live path is the same name in other bytes
    /// (another Unicode normalization), by place: the manifest's spelling is the new version's.
    private let respelled: [Int32: BundlePath]

    /// None.
    init() { (table, places, respelled) = (FileTable(), [], [:]) }

    /// The entries of `table` at `places`, in any order, with the paths of `respelled`.
    init(_ table: FileTable, at places: consuming [Int32], respelled: [Int32: BundlePath] = [:]) {
        places.sort()
        self.table = table
        self.places = places
        self.respelled = respelled
    }

    var startIndex: Int { 0 }
    var endIndex: Int { places.count }

    subscript(index: Int) -> (path: BundlePath, record: FileRecord) {
        let place = places[index]
        let entry = table.entries[Int(place)]
        // Otherwise the live path is the very text of the selected entry that matched it.
        return (respelled[place] ?? BundlePath(trusted: entry.path), entry.record)
    }

    /// The kept files for a version's record, read from the live table. A respelled path sorts
    /// where the live one does: ``PathOrder`` compares names by canonical equivalence.
    var run: FileListing.Run {
        let (table, places, respelled) = (table, places, respelled)
        return FileListing.Run(count: places.count) { index in
            let place = places[index]
            var entry = table.entries[Int(place)]
            if let path = respelled[place] { entry.path = path.string }
            return entry
        }
    }
}
