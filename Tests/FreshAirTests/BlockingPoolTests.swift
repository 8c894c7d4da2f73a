import Foundation
import Synchronization
import Testing

@testable import FreshAir

@Suite("BlockingPool.perform: parts run on the caller and on the pool's free threads")
struct BlockingPoolTests {
    struct Failure: Error, Equatable {
        let part: Int
    }

    @Test("Every part runs once; the lowest part's error is rethrown once all are done")
    func everyPartOnce() {
        let pool = BlockingPool(threads: 3)
        let runs = Mutex([Int](repeating: 0, count: 40))
        #expect(throws: Failure(part: 7)) {
            try pool.perform(40) { part in
                runs.withLock { $0[part] += 1 }
                if part == 30 || part == 7 { throw Failure(part: part) }
            }
        }
        #expect(runs.withLock { $0 } == [Int](repeating: 1, count: 40))
    }

    @Test(
        "With every thread of the pool blocked, the caller runs all the parts itself: slower, never stuck",
        .timeLimit(.minutes(1))
    )
    func busyPool() throws {
        let pool = BlockingPool(threads: 2)
        let release = DispatchSemaphore(value: 0)
        for _ in 0..<2 { pool.execute { release.wait() } }
        let done = Mutex(0)
        try pool.perform(5) { _ in done.withLock { $0 += 1 } }
        #expect(done.withLock { $0 } == 5)
        for _ in 0..<2 { release.signal() }
    }
}
