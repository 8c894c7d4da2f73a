/// The positions `0..<count` taken from `lanes` stretches of the list in turn: the first of
/// each stretch, then the second of each, and so on.
///
/// Downloads start in this order. A plan lists files in path order, so files next to each other are
/// mostly in one folder, and the requests in flight of a many-file sync landed a folder at a time,
/// the threads that create the files waiting on that folder's lock. Taken from eight stretches of
/// the list at once, files in flight are spread over as many folders, with no path read to know
/// which. A folder's files are still created in path order.
struct InterleavedOrder: Sequence {
    let count: Int
    let lanes: Int

    init(count: Int, lanes: Int) {
        self.count = Swift.max(0, count)
        self.lanes = Swift.max(1, Swift.min(lanes, Swift.max(1, count)))
    }

    /// Where stretch `lane` starts (`lanes`: the end of the last one).
    func start(of lane: Int) -> Int { lane * count / lanes }

    struct Iterator: IteratorProtocol {
        let order: InterleavedOrder
        var rank = 0
        var lane = 0

        mutating func next() -> Int? {
            // Stretches differ in length by one at most: none is longer than count / lanes
            // rounded up.
            while rank < (order.count + order.lanes - 1) / order.lanes {
                defer {
                    lane += 1
                    if lane == order.lanes { (lane, rank) = (0, rank + 1) }
                }
                let position = order.start(of: lane) + rank
                if position < order.start(of: lane + 1) { return position }
            }
            return nil
        }
    }

    func makeIterator() -> Iterator { Iterator(order: self) }
    var underestimatedCount: Int { count }
}
