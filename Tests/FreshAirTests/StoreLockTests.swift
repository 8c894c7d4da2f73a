import Foundation
import Testing

@testable import FreshAir

@Suite("The store's lock, let go while an update waits on the network")
struct StoreLockTests {
    struct DownloadFailed: Error {}

    /// A lock in a folder of its own, which `body` can take away so the lock cannot be taken again.
    func withLock(_ body: (StoreLock, URL) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lock-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let lock = try await StoreLock(
            path: folder.appendingPathComponent("lock").path,
            timeout: .seconds(1),
            environment: .system
        )
        defer { lock.release() }
        try await body(lock, folder)
    }

    @Test("When the wait failed and the lock cannot be taken again, the wait's error is the one thrown: it says why")
    func failedWaitSaysWhy() async throws {
        try await withLock { lock, folder in
            await #expect(throws: DownloadFailed.self) {
                try await lock.released(
                    while: {
                        // A disk that failed a write mid-download may go read-only: the lock's
                        // file then cannot be opened again either.
                        try FileManager.default.removeItem(at: folder)
                        throw DownloadFailed()
                    },
                    unchanged: { true }
                )
            }
        }
    }

    @Test("When the wait succeeded and the lock cannot be taken again, that is the error")
    func lockFailureAfterSuccess() async throws {
        try await withLock { lock, folder in
            let error = await #expect(throws: FreshAirError.self) {
                try await lock.released(
                    while: { try FileManager.default.removeItem(at: folder) },
                    unchanged: { true }
                )
            }
            #expect(error?.code == .fileSystem, "\(String(describing: error))")
        }
    }
}
