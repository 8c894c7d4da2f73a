/// The live files an update carries over unchanged, in path order: their places in the live
/// version's table, which already holds each one's path and record.
///
/// A list of each kept file's path and record was 64 bytes a file beside the live table that
/// held the same: 6.4 MB for an update of 10 files in 100,000. A place is 4 bytes.
struct KeptFiles: RandomAccessCollection, Sendable {
    private let table: FileTable
    /// Places in `table`, ascending: so the files are in path order.
    private let places: [Int32]

    /// None.
    init() { (table, places) = (FileTable(), []) }

    /// The entries of `table` at `places`, in any order.
    init(_ table: FileTable, at places: consuming [Int32]) {
        places.sort()
        self.table = table
        self.places = places
    }

    var startIndex: Int { 0 }
    var endIndex: Int { places.count }

    subscript(index: Int) -> (path: BundlePath, record: FileRecord) {
        let entry = table.entries[Int(places[index])]
        // The live path is the very text of the selected entry that matched it.
        return (BundlePath(trusted: entry.path), entry.record)
    }

    /// The kept files for a version's record, read from the live table.
    var run: FileListing.Run {
        let (table, places) = (table, places)
        return FileListing.Run(count: places.count) { table.entries[Int(places[$0])] }
    }
}
