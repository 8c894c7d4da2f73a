import Foundation
import Testing

@testable import FreshAir

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Whole reads and writes at an offset, and what a file cut short answers")
struct PositionalIOTests {
    func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("positional-\(UUID().uuidString)").path
    }

    @Test("Bytes written at offsets read back whole, from any offset")
    func writeThenRead() throws {
        let path = temporaryPath()
        defer { unlink(path) }
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL, 0o600)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        // The second half first: the file has a hole until the first half lands.
        try bytes[50_000...].withUnsafeBytes { try PositionalIO.write(descriptor, $0, at: 50_000) }
        try bytes[..<50_000].withUnsafeBytes { try PositionalIO.write(descriptor, $0, at: 0) }
        var back = [UInt8](repeating: 0, count: 30_000)
        try back.withUnsafeMutableBytes { try PositionalIO.read(descriptor, at: 40_000, into: $0) }
        #expect(back[...] == bytes[40_000..<70_000])
    }

    @Test("A read past the end is short; a closed descriptor is the system's error")
    func shortAndFailed() throws {
        let path = temporaryPath()
        defer { unlink(path) }
        try Data(repeating: 7, count: 1_000).write(to: URL(fileURLWithPath: path))
        let descriptor = open(path, O_RDONLY)
        try #require(descriptor >= 0)
        var buffer = [UInt8](repeating: 0, count: 100)
        #expect(throws: PositionalIO.Failure.short) {
            try buffer.withUnsafeMutableBytes { try PositionalIO.read(descriptor, at: 950, into: $0) }
        }
        close(descriptor)
        #expect(throws: PositionalIO.Failure.system(EBADF)) {
            try buffer.withUnsafeMutableBytes { try PositionalIO.read(descriptor, at: 0, into: $0) }
        }
    }

    @Test("A file shorter than its reader expects is a clear error that names it")
    func inputFileCutShort() throws {
        let path = temporaryPath()
        defer { unlink(path) }
        try Data(repeating: 7, count: 1_000).write(to: URL(fileURLWithPath: path))
        let file = try InputFile(path: path)
        var buffer = [UInt8](repeating: 0, count: 100)
        #expect {
            try buffer.withUnsafeMutableBytes { try file.read(at: 950, into: $0) }
        } throws: { error in
            let text = "\(error)"
            return (error as? FreshAirError)?.code == .fileSystem && text.contains("shorter than expected")
                && text.contains(path)
        }
    }
}
