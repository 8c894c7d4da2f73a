import Foundation
import Synchronization

/// A few threads of FreshAir's own for work that blocks: writing and hashing files,
/// extracting archives, flushing to disk, collecting garbage.
///
/// Swift's cooperative pool has one thread per core; a `write(2)` or `syncfs(2)` there stalls
/// every task of the app (a SwiftUI view's, a network callback's) that waits for that thread.
/// Like SwiftNIO's `NIOThreadPool`, which Hummingbird uses for file I/O, these threads exist
/// to be blocked, and callers `await` them.
final class BlockingPool: Sendable {
    /// The pool every store and download uses: as many threads as cores, at least two and at
    /// most eight (disks gain little from more).
    static let shared = BlockingPool(threads: min(8, max(2, ProcessInfo.processInfo.activeProcessorCount)))

    private let jobs: JobQueue

    init(threads: Int) {
        jobs = JobQueue()
        for index in 0..<threads {
            let thread = Thread { [jobs] in
                while let job = jobs.next() { job() }
            }
            thread.name = "FreshAir.BlockingPool.\(index)"
            thread.start()
        }
    }

    /// Runs `job` on one of the pool's threads.
    func execute(_ job: @escaping @Sendable () -> Void) {
        jobs.add(job)
    }

    /// Runs `work` on the pool and returns what it returns; the calling task is suspended,
    /// not blocked, meanwhile.
    static func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            shared.execute { continuation.resume(with: Result { try work() }) }
        }
    }

    /// The contents of a small file, read on the pool; `nil` when it cannot be read.
    static func contents(of path: String) async -> Data? {
        try? await run { FileManager.default.contents(atPath: path) }
    }
}

/// The pool's queue: its threads wait here, on a condition of their own, for the next job.
private final class JobQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var head = 0

    func add(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    func next() -> (@Sendable () -> Void)? {
        condition.lock()
        defer { condition.unlock() }
        while head == jobs.count { condition.wait() }
        let job = jobs[head]
        head += 1
        if head > 1024, head * 2 > jobs.count {
            jobs.removeFirst(head)
            head = 0
        }
        return job
    }
}

/// Jobs that must run one after another, in order, on ``BlockingPool``: the chunks of one
/// file. ``submit(_:)`` suspends only while `capacity` jobs wait, which keeps memory flat
/// when the disk is slower than the network. One task submits; the first job that throws
/// ends the lane, and its error is rethrown by the next ``submit(_:)`` or by ``finish()``.
final class BlockingLane: Sendable {
    typealias Job = @Sendable () throws -> Void
    private typealias Waiter = CheckedContinuation<Void, Never>

    private struct State {
        var queue: [Job] = []
        var running = false
        var error: (any Error)?
        var waitingForRoom: Waiter?
        var waitingForEnd: Waiter?
    }

    private let state = Mutex(State())
    private let capacity: Int
    private let pool: BlockingPool

    init(capacity: Int = 16, pool: BlockingPool = .shared) {
        self.capacity = capacity
        self.pool = pool
    }

    /// Queues `job` after those already queued.
    func submit(_ job: @escaping Job) async throws {
        await withCheckedContinuation { continuation in
            let room = state.withLock { state -> Bool in
                guard state.queue.count >= capacity, state.error == nil else { return true }
                state.waitingForRoom = continuation
                return false
            }
            if room { continuation.resume() }
        }
        let (start, error) = state.withLock { state -> (Bool, (any Error)?) in
            if let error = state.error { return (false, error) }
            state.queue.append(job)
            guard !state.running else { return (false, nil) }
            state.running = true
            return (true, nil)
        }
        if let error { throw error }
        if start { pool.execute { self.drain() } }
    }

    /// Waits for every queued job, then rethrows the first error, if any.
    func finish() async throws {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                guard state.running else { return true }
                state.waitingForEnd = continuation
                return false
            }
            if done { continuation.resume() }
        }
        if let error = state.withLock({ $0.error }) { throw error }
    }

    /// Runs the queue on one pool thread until it is empty.
    private func drain() {
        while true {
            let (job, room, end) = state.withLock { state -> (Job?, Waiter?, Waiter?) in
                let room = state.waitingForRoom
                state.waitingForRoom = nil
                guard !state.queue.isEmpty, state.error == nil else {
                    state.queue.removeAll()
                    state.running = false
                    defer { state.waitingForEnd = nil }
                    return (nil, room, state.waitingForEnd)
                }
                return (state.queue.removeFirst(), room, nil)
            }
            room?.resume()
            end?.resume()
            guard let job else { return }
            do {
                try job()
            } catch {
                state.withLock { if $0.error == nil { $0.error = error } }
            }
        }
    }
}
