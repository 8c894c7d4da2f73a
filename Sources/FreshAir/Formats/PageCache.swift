/// The pages of a file read last, kept for the reads near them: each page in slot
/// `number % slots`, so that a lookup is one comparison. The long lists a sync spills to
/// disk (``SpilledPages``: paths; `DigestsAndSizes`: digests and sizes) share it.
///
/// Direct-mapped, not least recently used: every reader of a plan's lists moves through them in
/// order or near it, a few at once (a download starting, one landing, the next file's weight,
/// a pack's files), and neighbouring pages land in different slots. Two readers whose pages
/// share a slot read it in turn: a read of the file each time, never a wrong answer.
struct PageCache: Sendable {
    private var numbers: [Int]
    private var pages: [[UInt8]]

    /// An empty cache of `slots` pages.
    init(slots: Int) {
        numbers = [Int](repeating: -1, count: max(1, slots))
        pages = [[UInt8]](repeating: [], count: max(1, slots))
    }

    /// Page `number` as held, when it holds at least `length` bytes; otherwise as `read`
    /// answers it (a page can have grown since it was read: a list still being written).
    mutating func page(_ number: Int, length: Int, read: (Int) -> [UInt8]) -> [UInt8] {
        let slot = number % numbers.count
        if numbers[slot] != number || pages[slot].count < length {
            pages[slot] = read(number)
            numbers[slot] = number
        }
        return pages[slot]
    }

    /// Forgets page `number`, written again.
    mutating func forget(_ number: Int) {
        let slot = number % numbers.count
        guard numbers[slot] == number else { return }
        numbers[slot] = -1
        pages[slot] = []
    }

    /// Forgets every page.
    mutating func forgetAll() {
        self = PageCache(slots: numbers.count)
    }
}
