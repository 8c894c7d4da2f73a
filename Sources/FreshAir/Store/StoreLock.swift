import Foundation

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
final class StoreLock {
    private var descriptor: Int32

    /// Waits up to `timeout` for the lock.
    init(path: String, timeout: Duration) async throws {
        let descriptor = open(path, O_RDWR | O_CREAT, 0o644)
        guard descriptor >= 0 else { throw Disk.failure("open lock file", path) }
        let deadline = ContinuousClock.now + timeout
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline else {
                _ = close(descriptor)
                throw FreshAirError.storeLocked(path: path)
            }
            do { try await Task.sleep(for: .milliseconds(25)) } catch {
                _ = close(descriptor)
                throw error
            }
        }
        self.descriptor = descriptor
    }

    func release() {
        guard descriptor >= 0 else { return }
        _ = flock(descriptor, LOCK_UN)
        _ = close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
