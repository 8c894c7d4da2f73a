import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock(2)` on the store's lock file, so two processes (or two stores in
/// one process) never update the same store at once. The kernel releases it if the
/// holder dies, so a killed sync never leaves the store locked.
///
/// An update holds it for its local steps only and lets go while it waits on the network
/// (``StoreUpdate/withoutLock(_:)``): iOS ends a suspended app that holds a file lock in a
/// shared container (`0xdead10cc`), and a stalled download must not keep an app extension
/// from the store.
final class StoreLock: Sendable {
    let path: String
    private let timeout: Duration
    private let environment: SyncEnvironment
    /// The open lock file while the lock is held, else -1.
    private let descriptor = Mutex<Int32>(-1)

    /// Waits up to `timeout` for the lock, on `environment`'s clock.
    init(path: String, timeout: Duration, environment: SyncEnvironment) async throws {
        self.path = path
        self.timeout = timeout
        self.environment = environment
        try await acquire()
    }

    /// Takes the lock again after ``release()``, waiting up to the same timeout.
    func acquire() async throws {
        let descriptor = try Self.openLockFile(path)
        let deadline = environment.uptime() + timeout
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, environment.uptime() < deadline else {
                _ = close(descriptor)
                throw FreshAirError.storeLocked(path: path)
            }
            do { try await environment.sleep(.milliseconds(25)) } catch {
                _ = close(descriptor)
                throw error
            }
        }
        self.descriptor.withLock { $0 = descriptor }
    }

    /// Lets go of the lock while `body` runs (a wait on the network), then takes it again.
    ///
    /// - Throws: ``StoreChangedMeanwhile`` when `unchanged` says another update changed what
    ///   the caller planned from (whatever `body` ended with), so the caller plans again; else
    ///   what `body` threw (even when the lock cannot be taken again after it); else why the
    ///   lock could not be taken again.
    func released<Result>(
        while body: () async throws -> Result,
        unchanged: () -> Bool
    ) async throws -> Result {
        release()
        let outcome: Swift.Result<Result, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        do { try await acquire() } catch {
            // A failed wait says why first: a disk that failed a write mid-download may go
            // read-only, and "could not open lock file" would hide the write that failed.
            if case .failure(let cause) = outcome { throw cause }
            throw error
        }
        guard unchanged() else { throw StoreChangedMeanwhile() }
        return try outcome.get()
    }

    /// Runs `body` (a whole update), and again from the start when it finds the store changed
    /// while it did not hold the lock (``StoreChangedMeanwhile``), up to 3 times in all; then
    /// the store counts as busy with other updates.
    func replanningWhenChanged<Result>(_ body: () async throws -> Result) async throws -> Result {
        for attempt in 1...3 {
            do { return try await body() } catch is StoreChangedMeanwhile where attempt < 3 { continue }
        }
        throw FreshAirError.storeLocked(path: path)
    }

    /// Runs `body` with the lock at `path` held, waiting for it on this thread: for a caller
    /// that cannot await (a system downloader's callback must keep its file before it returns).
    /// Other holders keep the lock for local steps only; it is let go during network waits.
    static func holding<Result>(path: String, _ body: () throws -> Result) throws -> Result {
        let descriptor = try openLockFile(path)
        defer { _ = close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw Disk.failure("lock", path) }
        }
        defer { _ = flock(descriptor, LOCK_UN) }
        return try body()
    }

    private static func openLockFile(_ path: String) throws -> Int32 {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw Disk.failure("open lock file", path) }
        return descriptor
    }

    func release() {
        let held = descriptor.withLock { held in
            defer { held = -1 }
            return held
        }
        guard held >= 0 else { return }
        _ = flock(held, LOCK_UN)
        _ = close(held)
    }

    deinit { release() }
}

/// Another update changed the store while this one waited on the network without its lock:
/// what it planned is stale, so it plans again (see ``BundleStore/update(_:)``).
struct StoreChangedMeanwhile: Error {}
