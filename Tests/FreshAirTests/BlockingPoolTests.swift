import Foundation
import Synchronization
import Testing

@testable import FreshAir

@Suite("BlockingPool: parts run on the caller and on the pool's free threads; a job run is let go")
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

    @Test("A job's captures are let go once it has run: a pool does not keep what its jobs held")
    func jobsLetGo() async throws {
        final class Flag: Sendable { let isSet = Mutex(false) }
        final class Held: Sendable {
            let freed: Flag
            init(_ freed: Flag) { self.freed = freed }
            deinit { freed.isSet.withLock { $0 = true } }
        }
        let pool = BlockingPool(threads: 2)
        let freed = Flag()
        let ran = DispatchSemaphore(value: 0)
        do {
            let held = Held(freed)
            pool.execute {
                _ = held.freed
                ran.signal()
            }
        }
        ran.wait()
        // The thread lets the job go just after it returns.
        for _ in 0..<200 where !freed.isSet.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        #expect(freed.isSet.withLock { $0 }, "the pool still holds a job it has run")
    }
}
