import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// When a version being assembled has the disk start on the files written so far: after every
/// ``step`` new files, and never while the last such flush still runs.
///
/// The flush before the switch (``Durability``) still makes the version durable; these earlier
/// ones only hand the disk its work while more files are being created, so that the last one
/// waits for the tail. 10,000 files of 4 KB: that flush took 85–100 ms of a 0.36–0.42 s sync.
struct FlushAheadPolicy: Sendable {
    /// Files created between two flushes.
    let step: Int
    private var sinceLast = 0
    private(set) var flushing = false

    init(step: Int) {
        self.step = max(1, step)
    }

    /// Counts a file created; `true` when a flush starts now (the caller runs it, then calls
    /// ``finished()``).
    mutating func created() -> Bool {
        sinceLast += 1
        guard sinceLast >= step, !flushing else { return false }
        sinceLast = 0
        flushing = true
        return true
    }

    /// The flush that ``created()`` started has returned.
    mutating func finished() {
        flushing = false
    }
}

/// Flushes a folder's file system in the background as files are created in it (Linux,
/// `syncfs(2)` on a thread of its own, so that it holds up neither the writers nor
/// ``BlockingPool``). Elsewhere it does nothing: Apple platforms flush file by file at the
/// switch (``FlushPlan``), and an early start there has never been measured.
///
/// What these flushes report is ignored: the flush before the switch goes through the folder's
/// own descriptor, opened before any of this, and the kernel reports to it every write-back
/// error since it was opened, including one a flush here saw first
/// (``ConfinedFolder/flushFileSystem()``). That is why the descriptor here is an open of its
/// own and not a `dup`, which would share what was reported.
final class FlushAhead: Sendable {
    /// Files between two flushes: about 30 ms of creating small files on a 2-core Linux VM.
    static let defaultStep = 1024

    private let policy: Mutex<FlushAheadPolicy>
    private let descriptor: Int32
    /// Flushes started so far.
    var started: Int { count.load(ordering: .relaxed) }
    private let count = Atomic<Int>(0)

    /// - Parameter folder: an open descriptor of the folder, left open and unchanged.
    init?(folder: Int32, step: Int = FlushAhead.defaultStep) {
        #if os(Linux)
        guard LinuxCalls.syncfs != nil else { return nil }
        descriptor = openat(folder, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        policy = Mutex(FlushAheadPolicy(step: step))
        #else
        return nil
        #endif
    }

    deinit { close(descriptor) }

    /// Counts a file created in the folder, and starts a flush when the policy says so.
    func created() {
        guard policy.withLock({ $0.created() }) else { return }
        count.add(1, ordering: .relaxed)
        // The thread holds `self`, and so the descriptor, until its flush returns.
        let thread = Thread { [self] in
            #if os(Linux)
            _ = LinuxCalls.syncfs?(descriptor)
            #endif
            policy.withLock { $0.finished() }
        }
        thread.name = "FreshAir.FlushAhead"
        thread.start()
    }
}
