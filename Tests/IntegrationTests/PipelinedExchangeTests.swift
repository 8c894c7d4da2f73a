import FreshAir
import NIOCore
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
