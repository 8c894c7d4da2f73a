import AsyncHTTPClient
import Foundation
import FreshAir
import NIOCore
import Synchronization

/// AsyncHTTPClient's response body, read ahead by a task of the transport's own, so that the
/// idle timeout counts the waits for the server and never a wait for the reader.
///
/// AsyncHTTPClient's read timeout counts from the connection's last read. While the reader is
/// slower than the network (a slow disk, a busy device, a starved thread pool) AsyncHTTPClient
/// stops reading, by design, and the timer goes on counting: a reader held up for longer than
/// the timeout failed with "the server sent nothing within the idle timeout" from a server that
/// was fine. So the transport turns that timer off and keeps its own: the read-ahead task notes
/// when it starts waiting for the server's next bytes, and a timer of this body's fails the body
/// once one wait has lasted the idle timeout and is still on after two jobs queued behind the
/// read-ahead task have run (its wait may be for a thread, with the bytes already here). A wait
/// while the read-ahead buffer is full is the reader's, and is not counted.
///
/// What it costs: one task per response, a hand-over per chunk and a timer per idle timeout;
/// measured against AsyncHTTPClient's own body read in docs/BENCHMARKS.md (design measurements).
enum IdleWatchedBody {
    /// Chunks read ahead before the read-ahead task waits for the reader: AsyncHTTPClient holds
    /// a few more of its own.
    static let readAhead = HighLowWatermark(lowWatermark: 2, highWatermark: 8)
    typealias HighLowWatermark = NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark
    typealias Chunks = NIOThrowingAsyncSequenceProducer<ByteBuffer, any Error, HighLowWatermark, Watch>
    typealias Source = Chunks.Source

    /// The body's chunks, read ahead from `body` and failed with a ``TransportError/Kind/timeout``
    /// once the server has sent nothing for `idleTimeout` while more was wanted. Errors are
    /// AsyncHTTPClient's, translated by `translate`.
    static func reading(
        _ body: HTTPClientResponse.Body,
        idleTimeout: TimeAmount,
        on eventLoop: any EventLoop,
        url: URL,
        translate: @escaping @Sendable (any Error) -> any Error
    ) -> ResponseBody {
        let watch = Watch(idleTimeout: idleTimeout, eventLoop: eventLoop, url: url, priority: Task.currentPriority)
        let made = NIOThrowingAsyncSequenceProducer.makeSequence(
            elementType: ByteBuffer.self,
            failureType: (any Error).self,
            backPressureStrategy: readAhead,
            finishOnDeinit: true,
            delegate: watch
        )
        let source = made.source
        watch.start(
            Task {
                var iterator = body.makeAsyncIterator()
                do {
                    while watch.beginWaitingForServer() {
                        let chunk = try await iterator.next()
                        watch.endWaitingForServer()
                        guard let chunk else {
                            source.finish()
                            return
                        }
                        switch source.yield(chunk) {
                        case .produceMore: continue
                        case .stopProducing: guard await watch.readerWantsMore() else { return }
                        case .dropped: return
                        }
                    }
                } catch {
                    // A timeout has already finished the source, with its own error.
                    if watch.endWaitingForServer() { source.finish(translate(error)) }
                }
            },
            source: source
        )
        let reader = Reader(made.sequence.makeAsyncIterator())
        return ResponseBody { try await reader.next().map(ByteBufferBytes.init) }
    }

    /// Lets the body's closure advance the iterator. Unchecked `Sendable`: used by one task at a
    /// time, the one reading the body, never concurrently.
    private final class Reader: @unchecked Sendable {
        private var iterator: Chunks.AsyncIterator
        init(_ iterator: Chunks.AsyncIterator) { self.iterator = iterator }
        func next() async throws -> ByteBuffer? { try await iterator.next() }
    }

    /// What the read-ahead task, the reader's side and the timer share.
    final class Watch: NIOAsyncSequenceProducerDelegate {
        private struct State {
            /// When the read-ahead task began waiting for the server, while it waits.
            var waitingSince: NIODeadline?
            /// The reader asked for more since the read-ahead task last stopped.
            var wanted = false
            var resumeReadAhead: CheckedContinuation<Bool, Never>?
            /// Finished, abandoned by the reader, or timed out: nothing more is read.
            var ended = false
            var readAhead: Task<Void, Never>?
            var source: Source?
            var timer: Scheduled<Void>?
        }
        private let state = Mutex(State())
        private let idleTimeout: TimeAmount
        private let eventLoop: any EventLoop
        private let url: URL
        /// The read-ahead task's: the jobs that confirm a silence queue behind it.
        private let priority: TaskPriority

        init(idleTimeout: TimeAmount, eventLoop: any EventLoop, url: URL, priority: TaskPriority) {
            self.idleTimeout = idleTimeout
            self.eventLoop = eventLoop
            self.url = url
            self.priority = priority
        }

        fileprivate func start(
            _ readAhead: Task<Void, Never>,
            source: Source
        ) {
            let ended = state.withLock { state in
                state.readAhead = readAhead
                state.source = source
                return state.ended
            }
            if ended { readAhead.cancel() } else { arm(at: .now() + idleTimeout) }
        }

        /// Marks the start of a wait for the server; `false` once the body has ended.
        func beginWaitingForServer() -> Bool {
            state.withLock { state in
                if state.ended { return false }
                state.waitingSince = .now()
                return true
            }
        }

        /// Marks the end of a wait; `false` when the body has ended meanwhile (timed out).
        @discardableResult
        func endWaitingForServer() -> Bool {
            state.withLock { state in
                state.waitingSince = nil
                return !state.ended
            }
        }

        /// Waits until the reader wants more; `false` when it never will (it let go of the body).
        func readerWantsMore() async -> Bool {
            await withCheckedContinuation { continuation in
                let answer: Bool? = state.withLock { state in
                    if state.ended { return false }
                    if state.wanted {
                        state.wanted = false
                        return true
                    }
                    state.resumeReadAhead = continuation
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        }

        func produceMore() {
            let waiting: CheckedContinuation<Bool, Never>? = state.withLock { state in
                guard let waiting = state.resumeReadAhead else {
                    state.wanted = true
                    return nil
                }
                state.resumeReadAhead = nil
                return waiting
            }
            waiting?.resume(returning: true)
        }

        /// The reader let go of the body, read it to its end, or was cancelled: the read-ahead
        /// task stops, and AsyncHTTPClient closes a connection whose body was left unread.
        func didTerminate() {
            end()?.readAhead?.cancel()
        }

        /// What was running when the watch ended.
        fileprivate struct Ended {
            var readAhead: Task<Void, Never>?
            var source: Source?
        }

        /// Ends the watch, once, if `condition` holds: the timer stops and a waiting read-ahead task
        /// is told to stop.
        private func end(if condition: (State) -> Bool = { _ in true }) -> Ended? {
            let (ended, waiting): (Ended?, CheckedContinuation<Bool, Never>?) = state.withLock { state in
                guard !state.ended, condition(state) else { return (nil, nil) }
                state.ended = true
                state.timer?.cancel()
                let ended = Ended(readAhead: state.readAhead, source: state.source)
                let waiting = state.resumeReadAhead
                (state.readAhead, state.source, state.timer, state.resumeReadAhead) = (nil, nil, nil, nil)
                return (ended, waiting)
            }
            waiting?.resume(returning: false)
            return ended
        }

        private func arm(at deadline: NIODeadline) {
            let timer = eventLoop.scheduleTask(deadline: deadline) { [self] in check() }
            let ended = state.withLock { state in
                if !state.ended { state.timer = timer }
                return state.ended
            }
            if ended { timer.cancel() }
        }

        /// The timer: once a wait for the server has lasted the idle timeout, has it confirmed;
        /// else looks again when the current wait (or one that starts now) would.
        private func check() {
            let now = NIODeadline.now()
            let since: NIODeadline? = state.withLock { state in state.ended ? nil : state.waitingSince ?? now }
            guard let since else { return }
            guard now - since >= idleTimeout else { return arm(at: since + idleTimeout) }
            // The read-ahead task may be waiting not for the server but for a thread: bytes that
            // arrived resume it, on the cooperative threads, which a busy process can hold for
            // seconds (the full test run did, and failed a 1 s timeout so). Jobs queued behind it,
            // at its priority, answer: if that wait is still on when the second runs (the first
            // may run beside it), the server sent nothing.
            confirmSilence(since: since, checks: 2)
        }

        /// Fails the body if the wait that began at `since` is still on after `checks` jobs queued
        /// one after the other; else looks again as the timer does.
        private func confirmSilence(since: NIODeadline, checks: Int) {
            if checks > 0 {
                Task.detached(priority: priority) { [self] in confirmSilence(since: since, checks: checks - 1) }
                return
            }
            guard let ended = end(if: { $0.waitingSince == since }) else { return check() }
            ended.source?.finish(TransportError.serverSilent(url))
            ended.readAhead?.cancel()
        }
    }
}
