import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A thread of its own for the tasks that prefer it (`withTaskExecutorPreference`,
/// `Task(executorPreference:)`, or ``BackgroundThreadTrait``).
///
/// On a 2-core machine every test of a full run shares the global executor's two threads, and
/// a test that computes without awaiting keeps one until it ends. At the start of a run, when
/// all tests begin at once, a task resumed there waited up to 25 s for its turn (measured), and
/// a body streamed to it hit its 30 s idle timeout. A test that counts time runs its tasks here;
/// a test that computes for long runs here at a lower priority, and takes what the others leave.
///
/// ``stop()`` it when the tasks that prefer it have ended; a job enqueued after that (a task the
/// test left running) still runs, on the global executor's threads.
public final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    // `jobs` and `stopped` are guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false

    /// - Parameters:
    ///   - name: the thread's name, as `perf` and `/proc` show it (its first 15 bytes).
    ///   - niceness: added to the thread's nice value on Linux (where it is per thread): 10
    ///     gives it about a tenth of a core's share against a thread at 0.
    public init(name: String, niceness: Int32 = 0) {
        let thread = Thread { [self] in
            // A new thread takes its creator's name on Linux (a pool thread's, here), and
            // Foundation does not pass `Thread.name` on: a profile would count it as the pool.
            try? Data(name.utf8.prefix(15)).write(to: URL(fileURLWithPath: "/proc/thread-self/comm"))
            #if canImport(Glibc)
            if niceness != 0 { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness) }
            #endif
            runUntilStopped()
        }
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        let running = !stopped
        if running {
            jobs.append(job)
            condition.signal()
        }
        condition.unlock()
        if !running {
            let executor = asUnownedTaskExecutor()
            DispatchQueue.global().async { job.runSynchronously(on: executor) }
        }
    }

    /// Ends the thread once the jobs already enqueued have run.
    public func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func runUntilStopped() {
        while true {
            condition.lock()
            while jobs.isEmpty, !stopped { condition.wait() }
            let batch = jobs
            jobs = []
            condition.unlock()
            if batch.isEmpty { return }
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}
