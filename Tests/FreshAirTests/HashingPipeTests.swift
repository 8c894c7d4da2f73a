import Foundation
import Testing

@testable import FreshAir

@Suite("HashingPipe: bytes hashed on another thread, in the order they were sent")
struct HashingPipeTests {
    struct Stop: Error {}

    /// Sends `bytes` as a pass does: as much as the buffer's free end takes, until all are sent.
    func send(_ bytes: [UInt8], to pipe: HashingPipe) {
        var done = 0
        while done < bytes.count {
            pipe.send { buffer in
                let count = min(buffer.count, bytes.count - done)
                bytes[done..<done + count].withUnsafeBytes { buffer.copyMemory(from: $0) }
                done += count
                return count
            }
        }
    }

    @Test("Pieces of every size, more than the buffers, give the SHA-256 of all of them in order")
    func inOrder() {
        var all: [UInt8] = []
        let pipe = HashingPipe(buffers: 2, bufferSize: 1000)
        for piece in 0..<50 {
            let bytes = (0..<(piece * 37 % 1001)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ piece) }
            all += bytes
            send(bytes, to: pipe)
        }
        let digest = pipe.finish()
        #expect(digest == ContentHash.of(all, using: .sha256))
        #expect(pipe.finish() == digest, "a second call answers the same digest")
    }

    @Test("Small pieces share a buffer: only full buffers (and the last) go to the hashing thread")
    func smallPiecesShareBuffers() {
        let pipe = HashingPipe(buffers: 2, bufferSize: 1000)
        var all: [UInt8] = []
        for piece in 0..<250 {
            let bytes = [UInt8](repeating: UInt8(piece % 256), count: 10)
            all += bytes
            send(bytes, to: pipe)
        }
        #expect(pipe.handOffs == 2, "2,500 bytes fill two 1,000-byte buffers; the rest waits for more")
        #expect(pipe.finish() == ContentHash.of(all, using: .sha256))
        #expect(pipe.handOffs == 3, "finishing hands over the part-filled buffer")
    }

    @Test("A piece that fails to fill is not hashed, what was sent before it is, and the pipe still finishes")
    func failedFill() throws {
        let pipe = HashingPipe(buffers: 1, bufferSize: 16)
        pipe.send { buffer in
            [UInt8]([9]).withUnsafeBytes { buffer.copyMemory(from: $0) }
            return 1
        }
        #expect(throws: Stop.self) { try pipe.send { _ in throw Stop() } }
        pipe.send { buffer in
            [UInt8]([1, 2, 3]).withUnsafeBytes { buffer.copyMemory(from: $0) }
            return 3
        }
        #expect(pipe.finish() == ContentHash.of([9, 1, 2, 3], using: .sha256))
    }
}
