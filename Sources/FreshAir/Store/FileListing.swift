/// A version's files in path order, merged from runs that are each sorted, as they are read.
///
/// A listing reads the plan's own lists, each in path order, and the record is written from it
/// without a table of its own: a table of every landed file would sit beside the plan at the heap's
/// peak.
struct FileListing: Sendable, Sequence {
    /// Entries sorted by path (``PathOrder``), one per path, read by position.
    struct Run: Sendable {
        var count: Int
        var entry: @Sendable (Int) -> FileTable.Entry

        /// The entries of a table.
        init(_ table: FileTable) {
            let entries = table.entries
            count = entries.count
            entry = { entries[$0] }
        }

        /// `count` entries, the `index`th made by `entry(index)`.
        init(count: Int, entry: @escaping @Sendable (Int) -> FileTable.Entry) {
            self.count = count
            self.entry = entry
        }
    }

    /// Of two runs listing one path, the later run's entry is kept (as assigning twice would).
    let runs: [Run]

    init(_ runs: [Run]) { self.runs = runs }

    /// How many paths, each counted once: one pass of comparisons, no copy.
    func countPaths() -> Int { reduce(0) { count, _ in count + 1 } }

    func makeIterator() -> Iterator { Iterator(runs: runs) }

    /// Takes the least path of the runs' next entries, and moves past it in every run listing it.
    struct Iterator: IteratorProtocol {
        let runs: [Run]
        var positions: [Int]
        /// Each run's entry at its position, read once.
        var heads: [FileTable.Entry?]

        init(runs: [Run]) {
            self.runs = runs
            positions = Array(repeating: 0, count: runs.count)
            heads = runs.map { $0.count > 0 ? $0.entry(0) : nil }
        }

        mutating func next() -> FileTable.Entry? {
            var chosen: Int?
            for run in runs.indices {
                guard let head = heads[run] else { continue }
                // `<=`: of equal paths the later run wins.
                if let best = chosen, let bestHead = heads[best], PathOrder.compare(head.path, bestHead.path) > 0 {
                    continue
                }
                chosen = run
            }
            guard let chosen, let entry = heads[chosen] else { return nil }
            for run in runs.indices where heads[run].map({ PathOrder.compare($0.path, entry.path) == 0 }) ?? false {
                advance(run)
            }
            return entry
        }

        private mutating func advance(_ run: Int) {
            positions[run] += 1
            heads[run] = positions[run] < runs[run].count ? runs[run].entry(positions[run]) : nil
        }
    }
}

extension FileListing.Run {
    /// The elements of `list` that `entry` makes an entry of, in path order: `list`'s own order
    /// when it is sorted already (a manifest usually is), else an order of 4 bytes an element.
    init<List: RandomAccessCollection & Sendable>(
        _ list: List,
        path: @escaping @Sendable (List.Element) -> String,
        entry: @escaping @Sendable (Int, List.Element) -> FileTable.Entry?
    ) where List.Index == Int {
        var kept: [Int32] = []
        kept.reserveCapacity(list.count)
        for index in list.indices where entry(index, list[index]) != nil { kept.append(Int32(index)) }
        var sorted = true
        for rank in kept.indices.dropFirst()
        where PathOrder.compare(path(list[Int(kept[rank - 1])]), path(list[Int(kept[rank])])) >= 0 {
            sorted = false
            break
        }
        if !sorted { kept.sort { PathOrder.compare(path(list[Int($0)]), path(list[Int($1)])) < 0 } }
        let order = kept
        self.init(count: order.count) { rank in entry(Int(order[rank]), list[Int(order[rank])])! }
    }
}
