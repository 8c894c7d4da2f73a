import Foundation
import Synchronization
import Testing

@testable import FreshAir

@Suite("BytePipe: bytes consumed on another thread, in order, and a consumer's failure reported")
struct BytePipeTests {
    struct Refused: Error, Equatable { let at: Int }

    /// What the consumer saw, in order, with each buffer's mark.
    final class Seen: Sendable {
        let bytes = Mutex<[UInt8]>([])
        let marks = Mutex<[Int64]>([])
    }

    @Test("Every byte reaches the consumer in order; each buffer carries the last mark sent into it")
    func inOrderWithMarks() throws {
        let seen = Seen()
        let pipe = BytePipe(name: "test", buffers: 2, bufferSize: 100) { bytes, mark in
            seen.bytes.withLock { $0 += bytes }
            seen.marks.withLock { $0.append(mark) }
        }
        var all: [UInt8] = []
        for piece in 1...30 {
            let bytes = (0..<(piece * 13 % 71)).map { UInt8(truncatingIfNeeded: $0 &+ piece) }
            all += bytes
            bytes.withUnsafeBytes { pipe.send(mark: Int64(piece), copying: $0) }
        }
        try pipe.finish()
        #expect(seen.bytes.withLock { $0 } == all)
        let marks = seen.marks.withLock { $0 }
        #expect(marks == marks.sorted(), "marks arrive in the order they were sent")
        #expect(marks.last == 30)
    }

    @Test("settle() waits for what was sent, part-filled buffer included, and more may be sent after")
    func settleThenMore() throws {
        let seen = Seen()
        let pipe = BytePipe(name: "test", buffers: 2, bufferSize: 1000) { bytes, _ in
            Thread.sleep(forTimeInterval: 0.01)  // a slow consumer: settle must wait for it
            seen.bytes.withLock { $0 += bytes }
        }
        [UInt8]([1, 2, 3]).withUnsafeBytes { pipe.send(copying: $0) }
        try pipe.settle()
        #expect(seen.bytes.withLock { $0 } == [1, 2, 3])
        [UInt8]([4]).withUnsafeBytes { pipe.send(copying: $0) }
        try pipe.finish()
        #expect(seen.bytes.withLock { $0 } == [1, 2, 3, 4])
    }

    @Test("The consumer's first error ends its work: later buffers go unused, and settle and finish rethrow it")
    func consumerFailure() throws {
        let calls = Mutex(0)
        let pipe = BytePipe(name: "test", buffers: 2, bufferSize: 10) { _, _ in
            let call = calls.withLock {
                $0 += 1
                return $0
            }
            if call >= 2 { throw Refused(at: call) }
        }
        let bytes = [UInt8](repeating: 7, count: 10)
        // More buffers than the pipe has: a failed consumer must still hand them back.
        for _ in 0..<6 { bytes.withUnsafeBytes { pipe.send(copying: $0) } }
        #expect(throws: Refused(at: 2)) { try pipe.settle() }
        #expect(pipe.failure as? Refused == Refused(at: 2))
        #expect(throws: Refused(at: 2)) { try pipe.finish() }
        #expect(calls.withLock { $0 } == 2, "nothing is consumed after the first failure")
    }

    @Test("abandon() returns once the consumer stops, without consuming what is still queued")
    func abandonSkipsQueued() {
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let calls = Mutex(0)
        let firstDone = Mutex(false)
        let pipe = BytePipe(name: "test", buffers: 3, bufferSize: 4) { _, _ in
            if calls.withLock({
                $0 += 1
                return $0
            }) == 1 {
                started.signal()
                release.wait()
                firstDone.withLock { $0 = true }
            }
        }
        let bytes: [UInt8] = [1, 2, 3, 4]
        for _ in 0..<3 { bytes.withUnsafeBytes { pipe.send(copying: $0) } }
        started.wait()  // the first buffer is being consumed, two wait behind it
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { release.signal() }
        pipe.abandon()
        #expect(firstDone.withLock { $0 }, "abandon() waited for the buffer being consumed")
        #expect(calls.withLock { $0 } == 1, "the queued buffers were given back unused")
    }
}
