import Foundation
import FreshAir
import NIOCore
import Testing

@testable import FreshAirAsyncHTTPClient

/// How much one socket read of the pipelining client may bring (``ReadSizing``).
@Suite("Read sizes: up to 512 KB while few large answers stream, less as more do")
struct ReadSizingTests {
    @Test("The share: 512 KB for up to two streaming answers, halved as they double, never under 64 KB")
    func shares() {
        let kilobytes = [0: 512, 1: 512, 2: 512, 3: 256, 4: 256, 5: 128, 8: 128, 9: 64, 16: 64, 1000: 64]
        for (streaming, size) in kilobytes.sorted(by: { $0.key < $1.key }) {
            #expect(ReadSizing.largestRead(streaming: streaming) == size << 10, "\(streaming) streaming")
        }
    }

    @Test("The allocator grows with full reads up to the share, which it follows as answers begin and end")
    func allocatorFollowsTheShare() async {
        let sizing = ReadSizing()
        var allocator = SharedReadAllocator(sizing: sizing)
        #expect(allocator.nextBufferSize() == 2048)
        for _ in 0..<12 { _ = allocator.record(actualReadBytes: allocator.nextBufferSize()!) }
        #expect(allocator.nextBufferSize() == 512 << 10)
        #expect(allocator.buffer(allocator: ByteBufferAllocator()).capacity >= 512 << 10)

        /// The next read's size with `count` answers streaming, nested.
        let grown = allocator
        func sizeWhile(streaming count: Int) async -> Int {
            guard count > 0 else { return grown.nextBufferSize()! }
            return await sizing.streaming { await sizeWhile(streaming: count - 1) }
        }
        #expect(await sizeWhile(streaming: 4) == 256 << 10)
        #expect(await sizeWhile(streaming: 8) == 128 << 10)
        #expect(sizing.streamingNow == 0)
        #expect(allocator.nextBufferSize() == 512 << 10)
    }

    @Test(
        "A large body from nginx arrives in reads larger than NIO's 64 KB, counted as streaming while read; a small one is not counted",
        .timeLimit(.minutes(1))
    )
    func largeBodiesReadLarge() async throws {
        let served = try TransportTests.Served(large: true)
        try Data(count: 1000).write(to: served.folder.path("small.bin"))
        try await PipeliningTransport.withTransport { transport in
            let (largest, streaming) = try await transport.get(HTTPGetRequest(url: served.url("large.bin"))) {
                _,
                body in
                var largest = 0
                var first = true
                for try await chunk in body {
                    // The socket's buffer fills while the reader waits: the reads after it are full.
                    if first { try await Task.sleep(for: .milliseconds(200)) }
                    first = false
                    largest = max(largest, chunk.count)
                }
                return (largest, transport.readSizing.streamingNow)
            }
            #expect(largest > 64 << 10)
            #expect(largest <= ReadSizing.largest)
            #expect(streaming == 1)
            #expect(transport.readSizing.streamingNow == 0)

            let small = HTTPGetRequest(url: served.url("small.bin"), expectedBodySize: 1000)
            let streamingForSmall = try await transport.get(small) { _, body in
                _ = try await body.collect(upTo: 1 << 20)
                return transport.readSizing.streamingNow
            }
            #expect(streamingForSmall == 0)
        }
    }
}
