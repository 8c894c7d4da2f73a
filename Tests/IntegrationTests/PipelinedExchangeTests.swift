import Foundation
import FreshAir
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Synchronization
import Testing

@testable import FreshAirAsyncHTTPClient

/// When a ``PipelinedExchange`` wakes its caller: a small answer once, when it is all in.
@Suite("A pipelined exchange: a small answer wakes its task once, when it is in; a slow or large one as it comes")
struct PipelinedExchangeTests {
    let head = FreshAir.HTTPResponseHead(status: 200, headers: [("Content-Length", "10")])

    func chunk(_ count: Int) -> ByteBuffer { ByteBuffer(repeating: 1, count: count) }

    @Test("A small answer's head waits for its end; its body is then read without waiting")
    func smallWaitsForItsEnd() async throws {
        let exchange = PipelinedExchange(wholeUpTo: 100) { _ in }
        exchange.receive(head: head)
        #expect(!exchange.isHeadReady)
        #expect(exchange.receive(chunk: chunk(10)))
        #expect(!exchange.isHeadReady)
        let reader = Task { try await exchange.head().status }
        exchange.receiveEnd()
        #expect(try await reader.value == 200)
        #expect(try await exchange.nextChunk()?.readableBytes == 10)
        #expect(try await exchange.nextChunk() == nil)
    }

    @Test("A small answer slower than a read: its head is given when the read that brought it ends")
    func slowSmallAnswerIsReadAsItComes() async throws {
        let exchange = PipelinedExchange(wholeUpTo: 100) { _ in }
        exchange.readEnded()  // a read before the head changes nothing
        #expect(!exchange.isHeadReady)
        let reader = Task { try await exchange.head().status }
        exchange.receive(head: head)
        exchange.readEnded()
        #expect(try await reader.value == 200)
        let chunkReader = Task { try await exchange.nextChunk()?.readableBytes }
        #expect(exchange.receive(chunk: chunk(4)))
        #expect(try await chunkReader.value == 4)
    }

    @Test("A small answer that passes the size it was said to have is given at once")
    func largerThanSaid() {
        let exchange = PipelinedExchange(wholeUpTo: 100) { _ in }
        exchange.receive(head: head)
        #expect(exchange.receive(chunk: chunk(100)))
        #expect(!exchange.isHeadReady)
        #expect(exchange.receive(chunk: chunk(1)))
        #expect(exchange.isHeadReady)
    }

    @Test("An answer that may be large gives its head as it arrives")
    func largeAtOnce() {
        let exchange = PipelinedExchange(wholeUpTo: 0) { _ in }
        exchange.receive(head: head)
        #expect(exchange.isHeadReady)
    }

    @Test("A failure after a small answer's head wakes its waiting task with the failure")
    func failureWakes() async {
        let exchange = PipelinedExchange(wholeUpTo: 100) { _ in }
        exchange.receive(head: head)
        let reader = Task { try await exchange.head() }
        exchange.fail(CancellationError(), retryable: true)
        await #expect(throws: PipelinedExchange.Failure.self) { try await reader.value }
    }

    @Test("Bytes taken are counted once each, whether the caller waited for them or found them there")
    func takenCounted() async throws {
        let taken = Mutex(0)
        let exchange = PipelinedExchange(wholeUpTo: 100) { count in taken.withLock { $0 += count } }
        exchange.receive(head: head)
        #expect(exchange.receive(chunk: chunk(3)))
        #expect(exchange.receive(chunk: chunk(5)))
        exchange.receiveEnd()
        _ = try await exchange.head()
        while try await exchange.nextChunk() != nil {}
        #expect(taken.withLock { $0 } == 8)
    }
}

/// ``PipelineHandler`` on an `EmbeddedChannel`: time is the test's to move.
@Suite("A pipelined connection's handler, with the clock in the test's hands")
struct PipelineHandlerTests {
    /// A handler on a connected `EmbeddedChannel`, behind `first` when given.
    func connectedHandler(
        behind first: (any ChannelHandler)? = nil,
        sizing: ReadSizing = ReadSizing(),
        held: HeldBytes? = nil,
        idleTimeout: TimeAmount = .seconds(30)
    ) async throws -> (EmbeddedChannel, PipelineHandler) {
        let channel = EmbeddedChannel()
        let ready = channel.eventLoop.makePromise(of: Void.self)
        let handler = PipelineHandler(
            url: URL(string: "http://127.0.0.1/a.bin")!,
            held: held ?? HeldBytes(depth: 8, sizing: sizing),
            idleTimeout: idleTimeout,
            ready: ready,
            waitsForTLS: false,
            events: .init(answered: {}, retired: { _ in })
        )
        if let first { try channel.pipeline.syncOperations.addHandler(first) }
        try channel.pipeline.syncOperations.addHandler(handler)
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 80)).get()
        try await ready.futureResult.get()
        return (channel, handler)
    }

    /// Sends a GET for `exchange` on `handler`, and answers it with a `200` announcing `length` bytes.
    func answer(
        _ exchange: PipelinedExchange,
        on handler: PipelineHandler,
        in channel: EmbeddedChannel,
        length: Int
    ) throws {
        handler.send(
            HTTPRequestHead(version: .http1_1, method: .GET, uri: "/a.bin"),
            for: exchange,
            timeout: .seconds(5)
        )
        let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Length": "\(length)"])
        try channel.writeInbound(HTTPClientResponsePart.head(head))
    }

    @Test(
        "A connection closed idle before a request's turn fails it as never sent, not as a server that answered nothing"
    )
    func closedIdleBeforeTheRequest() async throws {
        let (channel, handler) = try await connectedHandler(behind: IdleStateHandler(readTimeout: .milliseconds(50)))
        // The task that leased this connection has not sent its request within the idle timeout
        // (on a busy machine, it waited that long for a thread): the connection closes idle.
        // `IdleStateHandler` measures the silence on the real clock, its timer on the loop's.
        try await Task.sleep(for: .milliseconds(100))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(100))
        #expect(!channel.isActive)
        let exchange = PipelinedExchange { _ in }
        handler.send(
            HTTPRequestHead(version: .http1_1, method: .GET, uri: "/a.bin"),
            for: exchange,
            timeout: .seconds(5)
        )
        await #expect {
            _ = try await exchange.head()
        } throws: { error in
            if case PipelinedExchange.Failure.notSent = error { return true }
            return false
        }
    }

    @Test(
        "After its callers stalled it for longer than the idle timeout, a connection gives the server a whole timeout again before calling it silent"
    )
    func stallIsNotSilence() async throws {
        let held = HeldBytes(depth: 8)
        let timeout = TimeAmount.milliseconds(50)
        let (channel, handler) = try await connectedHandler(
            behind: IdleStateHandler(readTimeout: timeout),
            held: held,
            idleTimeout: timeout
        )
        let exchange = PipelinedExchange { held.count.subtract($0, ordering: .relaxed) }
        try answer(exchange, on: handler, in: channel, length: 6 << 16)
        for _ in 1...4 {
            try channel.writeInbound(HTTPClientResponsePart.body(ByteBuffer(repeating: 7, count: 64 << 10)))
        }
        #expect(held.count.load(ordering: .relaxed) >= held.highWater, "the connection stopped reading")
        _ = try await exchange.head()

        /// `IdleStateHandler` measures the silence on the real clock, its timer on the loop's.
        func silence(_ time: TimeAmount) async throws {
            try await Task.sleep(for: .nanoseconds(time.nanoseconds))
            channel.embeddedEventLoop.advanceTime(by: time)
        }
        // The caller is away (its threads busy) for twice the timeout: not the server's silence.
        try await silence(timeout * 2)
        #expect(channel.isActive)
        // It takes what waited and the connection reads again; the idle timer fires before that
        // read brings anything. The server has been sending all along: not silent either.
        for _ in 1...4 { _ = try await exchange.nextChunk() }
        handler.caughtUp()
        channel.embeddedEventLoop.advanceTime(by: timeout)
        #expect(channel.isActive, "closed as silent by a stall of this side's own")
        try channel.writeInbound(HTTPClientResponsePart.body(ByteBuffer(repeating: 7, count: 64 << 10)))
        // A server that does stop, once reading has started again, is still found out.
        try await silence(timeout * 2)
        #expect(!channel.isActive)
        await #expect {
            while try await exchange.nextChunk() != nil {}
        } throws: { error in
            guard case PipelinedExchange.Failure.failed(let failure) = error else { return false }
            return (failure as? TransportError)?.kind == .timeout
        }
    }

    @Test(
        "A chunk that fills less than half its read's buffer is copied: what is held keeps at most twice what is counted"
    )
    func sparseChunksCopied() async throws {
        let (channel, handler) = try await connectedHandler()
        let exchange = PipelinedExchange { _ in }
        try answer(exchange, on: handler, in: channel, length: 500 << 10)

        /// A read of `count` bytes into a buffer of 512 KB, as the socket fills it.
        func read(_ count: Int) -> ByteBuffer {
            var buffer = ByteBufferAllocator().buffer(capacity: 512 << 10)
            buffer.writeRepeatingByte(7, count: count)
            return buffer
        }
        for count in [100 << 10, 300 << 10, 100 << 10] {
            try channel.writeInbound(HTTPClientResponsePart.body(read(count)))
        }
        try channel.writeInbound(HTTPClientResponsePart.end(nil))
        _ = try await exchange.head()
        var chunks: [ByteBuffer] = []
        while let chunk = try await exchange.nextChunk() { chunks.append(chunk) }
        #expect(chunks.map(\.readableBytes) == [100 << 10, 300 << 10, 100 << 10])
        for chunk in chunks {
            #expect(chunk.storageCapacity < 2 * chunk.readableBytes, "\(chunk.readableBytes) bytes")
        }
        // A read more than half full is passed on as it came: no copy where the memory is used.
        #expect(chunks[1].storageCapacity >= 512 << 10)
    }

    /// Counts the reads the handler asks of the channel.
    final class ReadCounter: ChannelOutboundHandler, @unchecked Sendable {
        typealias OutboundIn = Any
        var reads = 0
        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    @Test(
        "With 8 large answers streaming, a connection stops reading at 128 KB held, one read's share; a line of small answers at 256 KB"
    )
    func heldLimitFollowsTheShare() async throws {
        let sizing = ReadSizing()
        /// Runs `body` with `count` large answers counted as streaming.
        func streaming(_ count: Int, _ body: () async throws -> Void) async throws {
            guard count > 0 else { return try await body() }
            try await sizing.streaming { try await streaming(count - 1, body) }
        }
        /// How many 64 KB chunks arrive, not taken, before the connection stops reading.
        func chunksUntilStalled(wholeUpTo: Int) async throws -> Int {
            let counter = ReadCounter()
            let (channel, handler) = try await connectedHandler(behind: counter, sizing: sizing)
            let exchange = PipelinedExchange(wholeUpTo: wholeUpTo) { _ in }
            try answer(exchange, on: handler, in: channel, length: 1 << 20)
            for chunk in 1...16 {
                let before = counter.reads
                try channel.writeInbound(HTTPClientResponsePart.body(ByteBuffer(repeating: 7, count: 64 << 10)))
                if counter.reads == before { return chunk }
            }
            return 16
        }
        try await streaming(8) {
            #expect(sizing.largestRead == 128 << 10)
            let large = try await chunksUntilStalled(wholeUpTo: 0)
            #expect(large == 2)
            // A line of small answers (here one larger than it said) keeps room for every one queued.
            let small = try await chunksUntilStalled(wholeUpTo: 32 << 10)
            #expect(small == 4)
        }
        // With no other answer streaming, a large one holds what a line of small ones does.
        let alone = try await chunksUntilStalled(wholeUpTo: 0)
        #expect(alone == 4)
    }
}
