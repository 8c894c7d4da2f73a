import FreshAir
import NIOCore
import Synchronization

/// One request sent on a pipelined connection and what has come back for it: the head, body
/// chunks not yet read, the end, or why it failed. The connection's handler fills it on the event
/// loop; the task that sent the request reads it, and waits only when nothing has arrived.
///
/// A small answer wakes its task once, with the read that ends it (or, if it is slow, with the
/// end of the first read that brought its head), instead of once for the head and again for the
/// body: each wake is a hop between threads, which at 10,000 files cost more than reading the
/// answers.
final class PipelinedExchange: Sendable {
    /// How the exchange ended without a response the caller can read.
    enum Failure: Error {
        /// The connection closed (or was closed) before any of the response arrived: the request
        /// may be sent again on another connection, as a GET is safe to repeat. `afterAnswers`:
        /// the connection had answered others first (a server that closes after so many
        /// requests), which is progress, not a server that answers nothing.
        case unanswered(afterAnswers: Bool)
        /// The request was never written: its connection had closed, or was retired, before its
        /// turn, not by a server that answered nothing (closed idle by this side, say, while this
        /// task waited for a thread). Sent again on another without counting against the server.
        case notSent
        /// Anything else, already in ``TransportError``'s terms.
        case failed(any Error)
    }

    private struct State {
        var head: HTTPResponseHead?
        var chunks = CircularBuffer<ByteBuffer>()
        var ended = false
        var failure: Failure?
        var headWaiter: CheckedContinuation<HTTPResponseHead, any Error>?
        var bodyWaiter: CheckedContinuation<ByteBuffer?, any Error>?
        /// The caller is done with it: chunks arriving now are dropped.
        var abandoned = false
        /// Body bytes received.
        var received = 0
        /// A read that brought the head is over: the answer is slow, and read as it comes.
        var readPassed = false

        /// Whether the head is given to the caller now: at once for an answer that may be large,
        /// for a small one once it ended, passed `wholeUpTo` bytes, or a read ended without it.
        func headIsReady(wholeUpTo: Int) -> Bool {
            head != nil && (wholeUpTo == 0 || ended || readPassed || received > wholeUpTo)
        }

        /// The head's waiter and the head, taken from the state once the head is ready for it.
        mutating func takeHeadWaiterIfReady(
            wholeUpTo: Int
        ) -> (CheckedContinuation<HTTPResponseHead, any Error>, HTTPResponseHead)? {
            guard let waiter = headWaiter, headIsReady(wholeUpTo: wholeUpTo) else { return nil }
            headWaiter = nil
            return (waiter, head!)
        }

        /// The head, or why there will be none, when the caller may have it now.
        func readyHead(wholeUpTo: Int) -> Result<HTTPResponseHead, any Error>? {
            if headIsReady(wholeUpTo: wholeUpTo) { return .success(head!) }
            return failure.map { .failure($0) }
        }

        /// The next chunk, the end (`nil`), or why the body stopped, when there is one now.
        mutating func readyChunk() -> Result<ByteBuffer?, any Error>? {
            if let chunk = chunks.popFirst() { return .success(chunk) }
            if ended { return .success(nil) }
            return failure.map { .failure($0) }
        }
    }

    private let state = Mutex(State())
    /// Called with the size of each chunk the caller takes, so the connection reads again once
    /// its callers have caught up.
    private let taken: @Sendable (Int) -> Void
    /// Body bytes past which the head's waiter is woken before the end; 0 wakes it with the head.
    private let wholeUpTo: Int

    /// - Parameter wholeUpTo: an answer expected to be at most this many bytes wakes its caller
    ///   when it ends (or passes them, or a read ends without its end), not when its head
    ///   arrives; 0 for one that may be large.
    init(wholeUpTo: Int = 0, taken: @escaping @Sendable (Int) -> Void) {
        self.wholeUpTo = wholeUpTo
        self.taken = taken
    }

    // MARK: The event loop's side

    /// The response's head arrived.
    func receive(head: HTTPResponseHead) {
        let wake = state.withLock { state in
            state.head = head
            return state.takeHeadWaiterIfReady(wholeUpTo: wholeUpTo)  // a small answer's: by its end
        }
        if let (waiter, head) = wake { waiter.resume(returning: head) }
    }

    /// A chunk of the body arrived; answers whether it is held for the caller (else dropped,
    /// and the connection should not count it as waiting).
    func receive(chunk: ByteBuffer) -> Bool {
        let (waiter, headWake, kept):
            (
                CheckedContinuation<ByteBuffer?, any Error>?,
                (CheckedContinuation<HTTPResponseHead, any Error>, HTTPResponseHead)?,
                Bool
            ) = state.withLock { state in
                if state.abandoned { return (nil, nil, false) }
                if let waiter = state.bodyWaiter {
                    state.bodyWaiter = nil
                    return (waiter, nil, true)
                }
                state.chunks.append(chunk)
                state.received += chunk.readableBytes
                // A small answer larger than it was said to be: its caller reads it as it comes.
                return (nil, state.takeHeadWaiterIfReady(wholeUpTo: wholeUpTo), true)
            }
        if let waiter {
            taken(chunk.readableBytes)
            waiter.resume(returning: chunk)
        }
        if let (headWaiter, head) = headWake { headWaiter.resume(returning: head) }
        return kept
    }

    /// The connection's read that brought the head ended with the answer unfinished: its caller
    /// reads the rest as it comes.
    func readEnded() {
        let wake = state.withLock { state in
            if state.head != nil { state.readPassed = true }
            return state.takeHeadWaiterIfReady(wholeUpTo: wholeUpTo)
        }
        if let (waiter, head) = wake { waiter.resume(returning: head) }
    }

    /// The body ended.
    func receiveEnd() {
        let (waiter, headWake) = state.withLock { state in
            state.ended = true
            defer { state.bodyWaiter = nil }
            return (state.bodyWaiter, state.takeHeadWaiterIfReady(wholeUpTo: wholeUpTo))
        }
        waiter?.resume(returning: nil)
        if let (headWaiter, head) = headWake { headWaiter.resume(returning: head) }
    }

    /// The exchange cannot complete. A failure before the head becomes ``Failure/unanswered`` when
    /// `retryable`; after the head, the body is cut short whatever the cause.
    func fail(_ error: any Error, retryable: Bool, afterAnswers: Bool = false) {
        finish { head in head == nil && retryable ? .unanswered(afterAnswers: afterAnswers) : .failed(error) }
    }

    /// The request was never written (see ``Failure/notSent``).
    func failNotSent() {
        finish { _ in .notSent }
    }

    /// Ends the exchange with the failure `failure` makes of its head, if it has not ended.
    private func finish(_ failure: (HTTPResponseHead?) -> Failure) {
        let (headWaiter, bodyWaiter, failure):
            (
                CheckedContinuation<HTTPResponseHead, any Error>?, CheckedContinuation<ByteBuffer?, any Error>?,
                Failure?
            ) = state.withLock { state in
                guard !state.ended, state.failure == nil else { return (nil, nil, nil) }
                let failure = failure(state.head)
                state.failure = failure
                defer { (state.headWaiter, state.bodyWaiter) = (nil, nil) }
                return (state.headWaiter, state.bodyWaiter, failure)
            }
        guard let failure else { return }
        headWaiter?.resume(throwing: failure)
        bodyWaiter?.resume(throwing: failure)
    }

    var hasHead: Bool { state.withLock { $0.head != nil } }

    /// Its answer may be large: nothing is sent behind it on its connection.
    var mayBeLarge: Bool { wholeUpTo == 0 }

    /// Whether ``head()`` would return now, without waiting (for tests).
    var isHeadReady: Bool { state.withLock { $0.headIsReady(wholeUpTo: wholeUpTo) } }

    // MARK: The caller's side

    /// The response's head, once it arrives (for a small answer, once all of it has). A
    /// cancelled task stops waiting at once.
    func head() async throws -> HTTPResponseHead {
        // Most answers are in by the time their task runs: no continuation to make.
        if let ready = state.withLock({ $0.readyHead(wholeUpTo: wholeUpTo) }) { return try ready.get() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { state in
                    let ready = state.readyHead(wholeUpTo: wholeUpTo)
                    if ready == nil { state.headWaiter = continuation }
                    return ready
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            fail(CancellationError(), retryable: false)
        }
    }

    /// The next chunk of the body; `nil` at its end. A cancelled task stops waiting at once.
    func nextChunk() async throws -> ByteBuffer? {
        if let ready = state.withLock({ $0.readyChunk() }) { return try took(ready).get() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { state in
                    let ready = state.readyChunk()
                    if ready == nil { state.bodyWaiter = continuation }
                    return ready
                }
                if let ready { continuation.resume(with: took(ready)) }
            }
        } onCancel: {
            fail(CancellationError(), retryable: false)
        }
    }

    /// `ready`, its chunk counted as taken from the connection's held bytes.
    private func took(_ ready: Result<ByteBuffer?, any Error>) -> Result<ByteBuffer?, any Error> {
        if case .success(let chunk?) = ready { taken(chunk.readableBytes) }
        return ready
    }

    /// The caller is done: answers whether the response had been read to its end (else the
    /// connection must close, as what is left of it stands before the next response). Chunks
    /// still held are released to the connection's count.
    func abandon() -> Bool {
        let (complete, held) = state.withLock { state in
            state.abandoned = true
            let held = state.chunks.reduce(0) { $0 + $1.readableBytes }
            state.chunks.removeAll()
            return (state.ended && state.failure == nil, held)
        }
        if held > 0 { taken(held) }
        return complete
    }
}
