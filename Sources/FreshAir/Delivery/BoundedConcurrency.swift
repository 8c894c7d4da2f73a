/// Runs `work` on each of `items`, at most `width` at a time (a new one starts as each
/// finishes), and hands every result to `take` on the calling task, in the order they finish.
/// The first error cancels the rest and is thrown. Every delivery mode's downloads go
/// through here: files, a delta's ranges, a repository's archives. `items` is read as each
/// item starts, on the calling task: a lazy sequence is never made into a list.
///
/// An item may count for more than one of `width` (`weight`, at most `width`): a sync keeps
/// many small files in flight on a pipelining transport, and a large file counts for as many
/// small ones as would share its connection. Items start in order: one that does not fit waits
/// for room, and those after it wait with it.
func forEachConcurrently<Item: Sendable, Output: Sendable>(
    _ items: some Sequence<Item>,
    width: Int,
    weight: (Item) -> Int = { _ in 1 },
    work: @escaping @Sendable (Item) async throws -> Output,
    take: (Output) async throws -> Void
) async throws {
    let width = max(1, width)
    try await withThrowingTaskGroup(of: (Output, Int).self) { group in
        var pending = items.makeIterator()
        var next = pending.next()
        var used = 0
        func startWhileRoom() {
            while let item = next {
                let cost = min(max(1, weight(item)), width)
                guard used == 0 || used + cost <= width else { return }
                used += cost
                group.addTask { (try await work(item), cost) }
                next = pending.next()
            }
        }
        startWhileRoom()
        while let (output, cost) = try await group.next() {
            used -= cost
            try await take(output)
            startWhileRoom()
        }
    }
}
