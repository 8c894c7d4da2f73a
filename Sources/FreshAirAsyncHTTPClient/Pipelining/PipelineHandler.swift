import Foundation
import FreshAir
import NIOCore
import NIOHTTP1
import NIOTLS
import Synchronization

/// The last handler of a pipelined connection: writes each request as it is given, and hands
/// the responses, which HTTP/1.1 sends in the order of the requests, to their exchanges.
///
/// Reading is by demand (`autoRead` off): it stops while the callers have more than
/// ``HeldBytes/highWater`` bytes received and not yet taken, so a slow disk slows the server down
/// instead of filling memory. Runs on the channel's event loop only.
final class PipelineHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = Never
    typealias OutboundOut = HTTPClientRequestPart

    /// What happens next on the connection, for the pool.
    struct Events: Sendable {
        /// A response ended: the connection may take another request.
        var answered: @Sendable () -> Void
        /// The connection takes no more requests (the server said it closes, or it closed);
        /// `true` when the server said so with its first answer.
        var retired: @Sendable (_ afterOneAnswer: Bool) -> Void
    }

    private let url: URL
    private let events: Events
    private var context: ChannelHandlerContext?
    /// Sent, in order; the first is the one being answered.
    private var queue = CircularBuffer<(exchange: PipelinedExchange, timeout: TimeAmount)>()
    private var headTimer: Scheduled<Void>?
    /// When the first request in line must have its head by; `nil` when it has it (or none waits).
    private var headDeadline: NIODeadline?
    private var reading = false
    /// Reading stopped until the callers catch up.
    private var stalled = false
    /// When reading last started again after a stall. The idle clock counts from the last read,
    /// so right after a long stall it would call the server silent before the first read had
    /// the chance to bring what it kept sending meanwhile.
    private var resumed: NIODeadline?
    /// The silence after which the server is taken to have stopped (``IdleStateHandler``'s).
    private let idleTimeout: TimeAmount
    private var retired = false
    /// This side began closing the connection (idle, timed out, abandoned).
    private var closing = false
    /// The server ended the connection (closed or reset it) before this side did.
    private var serverHungUp = false
    private var flushPending = false
    /// Responses received whole on this connection.
    private var answers = 0
    /// Bytes handed to exchanges and not yet taken by their callers; shared with them.
    private let held: HeldBytes

    /// Completed when the connection can take requests (after the TLS handshake, over TLS),
    /// failed if it closes first.
    private var ready: EventLoopPromise<Void>?
    private let waitsForTLS: Bool

    init(
        url: URL,
        held: HeldBytes,
        idleTimeout: TimeAmount,
        ready: EventLoopPromise<Void>,
        waitsForTLS: Bool,
        events: Events
    ) {
        self.url = url
        self.idleTimeout = idleTimeout
        self.ready = ready
        self.waitsForTLS = waitsForTLS
        self.held = held
        self.events = events
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        if !waitsForTLS { becomeReady(.success(())) }
        readIfCaughtUp()
    }

    private func becomeReady(_ result: Result<Void, any Error>) {
        ready?.completeWith(result)
        ready = nil
    }

    // MARK: Requests

    /// Writes `head` and queues `exchange` for its response. Called on the event loop.
    func send(_ head: HTTPRequestHead, for exchange: PipelinedExchange, timeout: TimeAmount) {
        guard let context, context.channel.isActive, !retired else {
            if serverHungUp, answers == 0 {
                // A server that closes before answering anything would close on this request too:
                // it counts as a send, or such a server is tried 64 times instead of 4.
                exchange.fail(TransportError.serverClosed(url), retryable: true, afterAnswers: false)
            } else {
                // Not the server's refusal: this side closed the connection (idle, say), or the
                // server retired it after answering, before this request's turn.
                exchange.failNotSent()
            }
            return
        }
        queue.append((exchange, timeout))
        if queue.count == 1 { armHeadTimer(timeout) }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.end(nil)), promise: nil)
        // One flush for the requests given in this turn of the loop: a system call each cost
        // more than the request itself.
        guard !flushPending else { return }
        flushPending = true
        context.eventLoop.assumeIsolated().execute { [self] in
            flushPending = false
            self.context?.flush()
        }
    }

    /// The caller of `exchange` stopped before the end of its response. A response under way
    /// could be long (and its server slow): the connection closes, and the requests behind it
    /// are sent again elsewhere. One not begun is read when its turn comes and dropped (it is
    /// small, or nothing is queued behind it).
    func abandoned(_ exchange: PipelinedExchange) {
        guard let first = queue.first, first.exchange === exchange, exchange.hasHead else { return }
        close(because: CancellationError(), retryFirst: false)
    }

    /// Callers took bytes: read again if reading had stopped for them.
    func caughtUp() {
        if stalled { readIfCaughtUp() }
    }

    // MARK: Responses

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            guard let first = queue.first else {
                return close(
                    because: TransportError(
                        kind: .interrupted,
                        url: url,
                        detail: "the server answered a request never sent"
                    ),
                    retryFirst: false
                )
            }
            headDeadline = nil
            held.receivingLarge.store(first.exchange.mayBeLarge, ordering: .relaxed)
            if !head.isKeepAlive { retire(afterOneAnswer: answers == 0) }
            first.exchange.receive(
                head: FreshAir.HTTPResponseHead(
                    status: Int(head.status.code),
                    headers: head.headers.map { ($0.name, $0.value) }
                )
            )
        case .body(var chunk):
            guard let first = queue.first else { return }
            // A chunk is a slice of its read's buffer (up to 512 KB, `ReadSizing`) and keeps it
            // whole until written. What is held here, and the file writer's queues, count bytes,
            // not buffers: copying a chunk that fills less than half its buffer (a small answer,
            // a read that came back half empty) keeps memory within twice their count.
            if chunk.storageCapacity >= 2 * chunk.readableBytes {
                chunk = context.channel.allocator.buffer(buffer: chunk)
            }
            if first.exchange.receive(chunk: chunk) {
                held.count.add(chunk.readableBytes, ordering: .relaxed)
            }
        case .end:
            held.receivingLarge.store(false, ordering: .relaxed)
            guard let first = queue.popFirst() else { return }
            first.exchange.receiveEnd()
            answers += 1
            if let next = queue.first { armHeadTimer(next.timeout) }
            if !retired { events.answered() }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // A small answer waits for its end to wake its task, unless it is slower than a read.
        queue.first?.exchange.readEnded()
        reading = false
        readIfCaughtUp()
        context.fireChannelReadComplete()
    }

    private func readIfCaughtUp() {
        guard let context, !reading else { return }
        if stalled { resumed = .now() }
        stalled = false
        if held.count.load(ordering: .relaxed) >= held.highWater {
            // Callers that take bytes from now on see the flag and call `caughtUp()`; one that
            // took them just before it was set is caught by the second look.
            held.paused.store(true, ordering: .sequentiallyConsistent)
            guard held.count.load(ordering: .sequentiallyConsistent) < held.highWater,
                held.paused.exchange(false, ordering: .sequentiallyConsistent)
            else {
                stalled = true
                return
            }
        }
        reading = true
        context.read()
    }

    // MARK: Ends

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let tls = event as? TLSUserEvent, case .handshakeCompleted = tls {
            becomeReady(.success(()))
            return
        }
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            // A connection with nothing asked, or whose callers have not caught up (or only just
            // have), is not late.
            let justResumed = resumed.map { .now() - $0 < idleTimeout } ?? false
            if queue.isEmpty {
                close(because: ChannelError.ioOnClosedChannel, retryFirst: true)
            } else if !stalled, !justResumed, queue.first?.exchange.hasHead == true {
                close(because: TransportError.serverSilent(url), retryFirst: false)
            }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset before any of the answer is a server closing with requests unread: those are
        // sent again. Anything else (a response that is not HTTP, TLS failing) is the answer.
        becomeReady(.failure(error))
        let reset = (error as? IOError).map { $0.errnoCode == ECONNRESET || $0.errnoCode == EPIPE } ?? false
        if reset, !closing { serverHungUp = true }
        close(because: AsyncHTTPClientTransport.translate(error, url: url), retryFirst: reset)
    }

    func channelInactive(context: ChannelHandlerContext) {
        becomeReady(.failure(ChannelError.ioOnClosedChannel))
        if !closing { serverHungUp = true }
        failAll(because: TransportError.serverClosed(url), retryFirst: true)
        retire()
        context.fireChannelInactive()
    }

    /// Gives the request now first in line until `timeout` from now to see its head. One timer
    /// serves them all: moved forward when it fires early, not cancelled and made again for each
    /// answer (a scheduled task each, 10,000 for 10,000 small files).
    private func armHeadTimer(_ timeout: TimeAmount) {
        headDeadline = .now() + timeout
        if headTimer == nil { scheduleHeadCheck(at: headDeadline!) }
    }

    private func scheduleHeadCheck(at deadline: NIODeadline) {
        guard let context else { return }
        headTimer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            headTimer = nil
            guard let due = headDeadline else { return }  // answered; the next one arms it again
            if due > .now() { return scheduleHeadCheck(at: due) }
            close(
                because: TransportError(kind: .timeout, url: url, detail: "no response within the request timeout"),
                retryFirst: false
            )
        }
    }

    /// Fails the request being answered with `error` (as unanswered, to be sent again, when
    /// `retryFirst` and none of it arrived) and those behind it as unanswered, and closes the
    /// connection.
    private func close(because error: any Error, retryFirst: Bool) {
        failAll(because: error, retryFirst: retryFirst)
        retire()
        closing = true
        context?.close(promise: nil)
    }

    private func failAll(because error: any Error, retryFirst: Bool) {
        headTimer?.cancel()
        (headTimer, headDeadline) = (nil, nil)
        var first = true
        while let (exchange, _) = queue.popFirst() {
            exchange.fail(error, retryable: first ? retryFirst : true, afterAnswers: answers > 0)
            first = false
        }
    }

    private func retire(afterOneAnswer: Bool = false) {
        guard !retired else { return }
        retired = true
        events.retired(afterOneAnswer)
    }
}
