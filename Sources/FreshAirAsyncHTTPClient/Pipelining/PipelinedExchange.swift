import FreshAir
import NIOCore
import Synchronization

/// One request sent on a pipelined connection and what has come back for it: the head, body
/// chunks not yet read, the end, or why it failed. The connection's handler fills it on the event
/// loop; the task that sent the request reads it, and waits only when nothing has arrived.
final class PipelinedExchange: Sendable {
    /// How the exchange ended without a response the caller can read.
    enum Failure: Error {
        /// The connection closed (or was closed) before any of the response arrived: the request
        /// may be sent again on another connection, as a GET is safe to repeat. `afterAnswers`:
        /// the connection had answered others first (a server that closes after so many
        /// requests), which is progress, not a server that answers nothing.
        case unanswered(afterAnswers: Bool)
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
    }

    private let state = Mutex(State())
    /// Called with the size of each chunk the caller takes, so the connection reads again once
    /// its callers have caught up.
    private let taken: @Sendable (Int) -> Void

    init(taken: @escaping @Sendable (Int) -> Void) {
        self.taken = taken
    }

    // MARK: The event loop's side

    /// The response's head arrived.
    func receive(head: HTTPResponseHead) {
        let waiter = state.withLock { state in
            state.head = head
            defer { state.headWaiter = nil }
            return state.headWaiter
        }
        waiter?.resume(returning: head)
    }

    /// A chunk of the body arrived; answers whether it is held for the caller (else dropped,
    /// and the connection should not count it as waiting).
    func receive(chunk: ByteBuffer) -> Bool {
        let (waiter, kept): (CheckedContinuation<ByteBuffer?, any Error>?, Bool) = state.withLock { state in
            if state.abandoned { return (nil, false) }
            if let waiter = state.bodyWaiter {
                state.bodyWaiter = nil
                return (waiter, true)
            }
            state.chunks.append(chunk)
            return (nil, true)
        }
        if let waiter {
            taken(chunk.readableBytes)
            waiter.resume(returning: chunk)
        }
        return kept
    }

    /// The body ended.
    func receiveEnd() {
        let waiter = state.withLock { state in
            state.ended = true
            defer { state.bodyWaiter = nil }
            return state.bodyWaiter
        }
        waiter?.resume(returning: nil)
    }

    /// The exchange cannot complete. A failure before the head becomes ``Failure/unanswered`` when
    /// `retryable`; after the head, the body is cut short whatever the cause.
    func fail(_ error: any Error, retryable: Bool, afterAnswers: Bool = false) {
        let (headWaiter, bodyWaiter, failure):
            (
                CheckedContinuation<HTTPResponseHead, any Error>?, CheckedContinuation<ByteBuffer?, any Error>?,
                Failure?
            ) = state.withLock { state in
                guard !state.ended, state.failure == nil else { return (nil, nil, nil) }
                let failure: Failure =
                    state.head == nil && retryable ? .unanswered(afterAnswers: afterAnswers) : .failed(error)
                state.failure = failure
                defer { (state.headWaiter, state.bodyWaiter) = (nil, nil) }
                return (state.headWaiter, state.bodyWaiter, failure)
            }
        guard let failure else { return }
        headWaiter?.resume(throwing: failure)
        bodyWaiter?.resume(throwing: failure)
    }

    var hasHead: Bool { state.withLock { $0.head != nil } }

    // MARK: The caller's side

    /// The response's head, once it arrives. A cancelled task stops waiting at once.
    func head() async throws -> HTTPResponseHead {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready: Result<HTTPResponseHead, any Error>? = state.withLock { state in
                    if let head = state.head { return .success(head) }
                    if let failure = state.failure { return .failure(failure) }
                    state.headWaiter = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            fail(CancellationError(), retryable: false)
        }
    }

    /// The next chunk of the body; `nil` at its end. A cancelled task stops waiting at once.
    func nextChunk() async throws -> ByteBuffer? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready: Result<ByteBuffer?, any Error>? = state.withLock { state in
                    if let chunk = state.chunks.popFirst() { return .success(chunk) }
                    if state.ended { return .success(nil) }
                    if let failure = state.failure { return .failure(failure) }
                    state.bodyWaiter = continuation
                    return nil
                }
                if let ready {
                    if case .success(let chunk?) = ready { taken(chunk.readableBytes) }
                    continuation.resume(with: ready)
                }
            }
        } onCancel: {
            fail(CancellationError(), retryable: false)
        }
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
