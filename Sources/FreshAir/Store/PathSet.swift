/// Paths found by their exact bytes: the files a staged version hard-linked from the live one,
/// which its flush leaves alone (``FlushPlan``).
///
/// Paths as bytes one after another (``PathList``), with an order of 4 bytes each made once for
/// binary search: a set of strings held most of an update's peak when nearly every file was kept.
struct PathSet: Sendable, ExpressibleByArrayLiteral {
    private let paths: PathList
    /// Positions in ``paths``, by the paths' bytes.
    private let order: [Int32]

    init(_ paths: PathList) {
        self.paths = paths
        order = (0..<Int32(paths.count)).sorted {
            paths.bytes(at: Int($0)).lexicographicallyPrecedes(paths.bytes(at: Int($1)))
        }
    }

    init(arrayLiteral paths: String...) { self.init(PathList(paths)) }

    /// Whether `path`, byte for byte, is one of the paths.
    func contains(_ path: String) -> Bool {
        let wanted = path.utf8
        let low = order.indices.firstPosition { !paths.bytes(at: Int(order[$0])).lexicographicallyPrecedes(wanted) }
        return low < order.count && paths.bytes(at: Int(order[low])).elementsEqual(wanted)
    }
}
