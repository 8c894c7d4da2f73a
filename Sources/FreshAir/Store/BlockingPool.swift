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
    /// How many threads the pool has.
    let threads: Int

    init(threads: Int) {
        jobs = JobQueue()
        self.threads = threads
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

    /// Runs `body` for each of `0..<count`, on the calling thread and on as many of the pool's
    /// threads as are free, and returns when all are done; rethrows the error of the lowest
    /// index that threw. Call it from a thread that may block (one of the pool's).
    ///
    /// The caller never waits for a part that no thread has started: it runs every part not
    /// yet taken itself, so a pool busy with other work makes this slower, never stuck.
    func perform(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
        guard count > 1 else {
            if count == 1 { try body(0) }
            return
        }
        let parts = SharedParts(count: count, body: body)
        for _ in 1..<min(count, threads) { execute { parts.work() } }
        parts.work()
        try parts.waitForAll()
    }

    /// The contents of a small file, read on the pool; `nil` when it cannot be read.
    static func contents(of path: String) async -> Data? {
        try? await run { FileManager.default.contents(atPath: path) }
    }
}

/// The parts of one `BlockingPool/perform(_:_:)`: each thread that joins takes the next
/// part not yet taken until none is left. Unchecked `Sendable`: its counters and errors are
/// guarded by `condition`, and `count` and `body` never change.
private final class SharedParts: @unchecked Sendable {
    private let count: Int
    private let body: @Sendable (Int) throws -> Void
    // `taken`, `done` and `errors` are guarded by `condition`.
    private let condition = NSCondition()
    private var taken = 0
    private var done = 0
    private var errors: [Int: any Error] = [:]

    init(count: Int, body: @escaping @Sendable (Int) throws -> Void) {
        self.count = count
        self.body = body
    }

    func work() {
        while let part = take() {
            let error: (any Error)?
            do {
                try body(part)
                error = nil
            } catch let thrown {
                error = thrown
            }
            condition.lock()
            if let error { errors[part] = error }
            done += 1
            if done == count { condition.broadcast() }
            condition.unlock()
        }
    }

    private func take() -> Int? {
        condition.lock()
        defer { condition.unlock() }
        guard taken < count else { return nil }
        taken += 1
        return taken - 1
    }

    /// Waits for the parts other threads took; throws the first part's error.
    func waitForAll() throws {
        condition.lock()
        while done < count { condition.wait() }
        let first = errors.min { $0.key < $1.key }?.value
        condition.unlock()
        if let first { throw first }
    }
}

/// The pool's queue: its threads wait here, on a condition of their own, for the next job.
/// Unchecked `Sendable`: `jobs` and `head` are touched only with `condition` locked.
private final class JobQueue: @unchecked Sendable {
    private let condition = NSCondition()
    /// A job taken is let go at once, with what it holds: a chunk delta's search tables (4 MB
    /// for a 1 GB file) stayed alive through the download while up to 1,024 taken jobs waited
    /// here to be dropped.
    private var jobs: [(@Sendable () -> Void)?] = []
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
        let job = jobs[head].take()
        head += 1
        if head > 1024, head * 2 > jobs.count {
            jobs.removeFirst(head)
            head = 0
        }
        return job
    }
}

/// Jobs that must run one after another, in order, on `BlockingPool`: the chunks of one
/// file. ``submit(_:)`` suspends only while `capacity` jobs wait, which keeps memory flat
/// when the disk is slower than the network. Two by default: a job is a batch of about
/// 256 KB of chunks (`BodySink`), and a 1 GB download was no slower with two than with four
/// (1.23 s and 1.25 s, medians of 5). One task submits; the first job that throws
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

    init(capacity: Int = 2, pool: BlockingPool = .shared) {
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
