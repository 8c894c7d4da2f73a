import Foundation
import Testing

@testable import FreshAir

@Suite("HashingPipe: bytes hashed on another thread, in the order they were sent")
struct HashingPipeTests {
    struct Stop: Error {}

    @Test("Pieces of every size, more than the buffers, give the SHA-256 of all of them in order")
    func inOrder() {
        var all: [UInt8] = []
        let pipe = HashingPipe(buffers: 2, bufferSize: 1000)
        for piece in 0..<50 {
            let bytes = (0..<(piece * 37 % 1001)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ piece) }
            all += bytes
            pipe.send { buffer in
                bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
                return bytes.count
            }
        }
        let digest = pipe.finish()
        #expect(digest == ContentHash.of(all, using: .sha256))
        #expect(pipe.finish() == digest, "a second call answers the same digest")
    }

    @Test("A piece that fails to fill is not hashed, its buffer comes back, and the pipe still finishes")
    func failedFill() throws {
        let pipe = HashingPipe(buffers: 1, bufferSize: 16)
        #expect(throws: Stop.self) { try pipe.send { _ in throw Stop() } }
        pipe.send { buffer in
            [UInt8]([1, 2, 3]).withUnsafeBytes { buffer.copyMemory(from: $0) }
            return 3
        }
        #expect(pipe.finish() == ContentHash.of([1, 2, 3], using: .sha256))
    }
}
