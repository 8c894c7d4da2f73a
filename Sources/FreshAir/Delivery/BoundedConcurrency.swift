/// Runs `work` on each of `items`, at most `width` at a time (a new one starts as each
/// finishes), and hands every result to `take` on the calling task, in the order they finish.
/// The first error cancels the rest and is thrown. Every delivery mode's downloads go
/// through here: files, a delta's ranges, a repository's archives. `items` is read as each
/// item starts, on the calling task: a lazy sequence is never made into a list.
func forEachConcurrently<Item: Sendable, Output: Sendable>(
    _ items: some Sequence<Item>,
    width: Int,
    work: @escaping @Sendable (Item) async throws -> Output,
    take: (Output) async throws -> Void
) async throws {
    try await withThrowingTaskGroup(of: Output.self) { group in
        var pending = items.makeIterator()
        func startNext() {
            guard let item = pending.next() else { return }
            group.addTask { try await work(item) }
        }
        for _ in 0..<max(1, width) { startNext() }
        while let output = try await group.next() {
            try await take(output)
            startNext()
        }
    }
}
