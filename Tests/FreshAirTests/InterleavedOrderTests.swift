import Testing

@testable import FreshAir

@Suite("InterleavedOrder: every download once, from several stretches of the list at a time")
struct InterleavedOrderTests {
    @Test("Each position comes once, whatever the count and the lanes; each stretch in its own order")
    func permutation() {
        for count in Array(0...40) + [99, 100, 101, 1000, 10_007] {
            for lanes in [0, 1, 2, 3, 7, 8, 9, 64] {
                let order = Array(InterleavedOrder(count: count, lanes: lanes))
                #expect(order.sorted() == Array(0..<count), "\(count) in \(lanes) lanes")
                // A stretch's positions come in increasing order: a folder's files are still
                // created in path order.
                let used = InterleavedOrder(count: count, lanes: lanes)
                var last = [Int: Int]()
                for position in order {
                    let lane = (0..<used.lanes).last { used.start(of: $0) <= position }!
                    #expect(last[lane].map { $0 < position } ?? true, "\(count) in \(lanes) lanes")
                    last[lane] = position
                }
            }
        }
    }

    @Test("Eight positions in a row are from eight different stretches, eight stretches apart on the list")
    func spread() {
        let order = Array(InterleavedOrder(count: 10_000, lanes: 8))
        #expect(Array(order.prefix(9)) == [0, 1250, 2500, 3750, 5000, 6250, 7500, 8750, 1])
        for window in stride(from: 0, to: order.count, by: 8) {
            #expect(Set(order[window..<window + 8].map { $0 / 1250 }).count == 8, "at \(window)")
        }
    }
}
