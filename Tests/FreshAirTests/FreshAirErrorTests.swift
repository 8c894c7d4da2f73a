import Foundation
import Testing

@testable import FreshAir

@Suite("FreshAirError: kinds by code, details by name, the underlying error kept")
struct FreshAirErrorTests {
    let url = URL(string: "https://example.com/content/manifest.json")!

    @Test("A status error gives its code, status and URL, and only a retryable status is transient")
    func httpStatus() {
        let missing = FreshAirError.httpStatus(404, url: url)
        #expect(missing.code == .httpStatus && missing.status == 404 && missing.url == url)
        #expect(!missing.isTransient && missing.underlying == nil && missing.path == nil)
        #expect(FreshAirError.httpStatus(503, url: url).isTransient)
        #expect("\(missing)".hasPrefix("HTTP 404 for \(url): not found."))
    }

    @Test("A failed system call keeps the system's error, not only its words")
    func fileSystemKeepsUnderlying() throws {
        let path = "/nonexistent-\(UUID().uuidString)/record.json"
        #expect {
            try Disk.rename(path, to: path + ".new")
        } throws: { error in
            guard let failure = error as? FreshAirError, failure.code == .fileSystem, failure.path == path + ".new",
                let posix = failure.underlying as? POSIXError
            else { return false }
            return posix.code == .ENOENT && "\(failure)".contains("No such file or directory")
        }
    }

    @Test("The bundled-copy error wraps the server's failure and takes its transience from it")
    func bundledCopyOnly() throws {
        let cut = TransportError(kind: .interrupted, url: url, detail: "reset")
        let error = FreshAirError.bundledCopyOnly(.transport(cut))
        #expect(error.code == .bundledCopyOnly && error.isTransient)
        let inner = try #require(error.underlying as? FreshAirError)
        #expect(inner.code == .transport && inner.transportError?.kind == .interrupted && inner.url == url)
        #expect(!FreshAirError.bundledCopyOnly(.httpStatus(403, url: url)).isTransient)
    }

    @Test("An archive failure is renamed for its package's URL; other kinds stay as they are")
    func namingPackage() {
        let archive = FreshAirError.archive(ArchiveError(.corrupt, "truncated"), package: "/store/partial/ab12")
        let named = archive.namingPackage(url.absoluteString)
        #expect(named.code == .archive && named.path == url.absoluteString && named.archiveError != nil)
        #expect("\(named)".hasPrefix("\(url): "))
        let other = FreshAirError.storeLocked(path: "/store")
        #expect(other.namingPackage("x").path == "/store")
    }

    @Test("Codes are distinct values with readable names")
    func codes() {
        let codes: [FreshAirError.Code] = [
            .httpStatus, .transport, .manifest, .hashMismatch, .sizeMismatch, .declaredSizeMismatch,
            .unrequestedEncoding, .archive, .bodyTooLarge, .storeLocked, .liveLocationOccupied, .unsafePath,
            .fileSystem, .noPreviousVersion, .bundledCopyOnly,
        ]
        #expect(Set(codes).count == codes.count)
        #expect(FreshAirError.Code.declaredSizeMismatch.description == "declaredSizeMismatch")
        #expect(FreshAirError.noPreviousVersion.code == .noPreviousVersion)
    }
}
