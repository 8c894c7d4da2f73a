import Foundation
import FreshAir
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// Bytes a connection has handed to its callers and they have not yet taken, and whether it
/// stopped reading for them: shared by the event loop and the callers' tasks.
final class HeldBytes: Sendable {
    let count = Atomic<Int>(0)
    let paused = Atomic<Bool>(false)
    /// A large answer is being received: nothing is queued behind it (``PipelineSchedule``).
    let receivingLarge = Atomic<Bool>(false)
    /// At least every small answer that may be queued on the connection, so that none of them
    /// waits for a caller to read another.
    private let forSmallAnswers: Int
    private let sizing: ReadSizing

    init(depth: Int, sizing: ReadSizing = ReadSizing()) {
        forSmallAnswers = max(256 << 10, Int(HTTPGetRequest.pipelinableBodySize) * depth)
        self.sizing = sizing
    }

    /// The count past which the connection stops reading. While a large answer streams, one
    /// read's share (``ReadSizing``) when that is less, so that what is held does not grow with
    /// the connections: the socket's own buffer keeps the data coming. 16 files of 64 MB at once
    /// peaked at 35.3 MB holding 256 KB each, 33.2 MB holding 128 KB, in the same time (medians
    /// of 9; with 1 MB each, 53 MB).
    var highWater: Int {
        receivingLarge.load(ordering: .relaxed) ? min(forSmallAnswers, sizing.largestRead) : forSmallAnswers
    }
}

/// An open connection, as the pool lends it.
struct PipelinedConnection: Sendable {
    let id: Int
    let channel: any Channel
    let handler: NIOLoopBound<PipelineHandler>
    let held: HeldBytes

    /// Writes the request on the connection; its answer arrives in `exchange`.
    func send(_ head: HTTPRequestHead, for exchange: PipelinedExchange, timeout: TimeAmount) {
        let handler = handler
        channel.eventLoop.execute { handler.value.send(head, for: exchange, timeout: timeout) }
    }

    /// The caller of `exchange` stopped before the end of its response.
    func abandon(_ exchange: PipelinedExchange) {
        let handler = handler
        channel.eventLoop.execute { handler.value.abandoned(exchange) }
    }

    /// A new exchange whose taken bytes count down this connection's held ones; `wholeUpTo`, as
    /// ``PipelinedExchange/init(wholeUpTo:taken:)``.
    func exchange(wholeUpTo: Int) -> PipelinedExchange {
        let (held, handler, loop) = (held, handler, channel.eventLoop)
        return PipelinedExchange(wholeUpTo: wholeUpTo) { taken in
            let after = held.count.subtract(taken, ordering: .relaxed).newValue
            if after < held.highWater, held.paused.exchange(false, ordering: .acquiringAndReleasing) {
                loop.execute { handler.value.caughtUp() }
            }
        }
    }
}

/// The connections of a ``PipeliningTransport``, per origin, lent by ``PipelineSchedule``'s
/// rules; a request told to wait is woken when the schedule changes and asks again.
final class PipelinedConnectionPool: Sendable {
    private enum Lease {
        case use(PipelinedConnection)
        case open(id: Int)
        case adopt(Task<PipelinedConnection, any Error>)
        case wait
        case askAgain
        case shutDown
    }

    private struct Origin {
        var schedule: PipelineSchedule
        var connections: [Int: PipelinedConnection] = [:]
        var waiters: [CheckedContinuation<Lease, Never>] = []
        /// The connection opening ahead of any request (``openAhead(to:connect:)``), while it opens.
        var ahead: Task<PipelinedConnection, any Error>?

        mutating func takeWaiters(_ wake: PipelineSchedule.Wake) -> [CheckedContinuation<Lease, Never>] {
            switch wake {
            case .none: return []
            case .one: return waiters.isEmpty ? [] : [waiters.removeFirst()]
            case .all:
                defer { waiters = [] }
                return waiters
            }
        }
    }

    private struct State {
        var origins: [String: Origin] = [:]
        var nextID = 0
        var isShutDown = false
    }

    private let state = Mutex(State())
    let connectionsPerHost: Int
    let depth: Int

    init(connectionsPerHost: Int, depth: Int) {
        self.connectionsPerHost = max(1, connectionsPerHost)
        self.depth = max(1, depth)
    }

    /// A connection to `origin` with room for the request, opened with `connect` when the
    /// schedule says so.
    func connection(
        to origin: String,
        small: Bool,
        connect: (_ id: Int) async throws -> PipelinedConnection
    ) async throws -> PipelinedConnection {
        var askingAgain = false
        while true {
            let lease = await lease(origin: origin, small: small, askingAgain: askingAgain)
            switch lease {
            case .use(let connection):
                return connection
            case .open(let id):
                return try await open(id, to: origin, connect: connect) {
                    $0.schedule.opened(id, small: small)
                } failed: {
                    $0.schedule.openFailed(id)
                }
            case .adopt(let ahead):
                return try await ahead.value
            case .wait, .askAgain:
                askingAgain = true
            case .shutDown:
                throw CancellationError()
            }
        }
    }

    /// The schedule's answer for a request; one told to wait returns when woken.
    private func lease(origin: String, small: Bool, askingAgain: Bool) async -> Lease {
        // Most requests get a connection at once: no continuation to make for them.
        let schedule = { PipelineSchedule(connectionsPerHost: self.connectionsPerHost, depth: self.depth) }
        let lease = state.withLock { state in
            Self.lease(&state, origin: origin, small: small, askingAgain: askingAgain, schedule: schedule())
        }
        guard case .wait = lease else { return lease }
        return await withCheckedContinuation { continuation in
            // Asked again under the lock that a wake takes: a wake between the two asks is not missed.
            let lease = state.withLock { state in
                let lease = Self.lease(&state, origin: origin, small: small, askingAgain: true, schedule: schedule())
                if case .wait = lease { state.origins[origin]!.waiters.append(continuation) }
                return lease
            }
            if case .wait = lease { return }
            continuation.resume(returning: lease)
        }
    }

    private static func lease(
        _ state: inout State,
        origin: String,
        small: Bool,
        askingAgain: Bool,
        schedule: @autoclosure () -> PipelineSchedule
    ) -> Lease {
        if state.isShutDown { return .shutDown }
        if state.origins[origin] == nil { state.origins[origin] = Origin(schedule: schedule()) }
        // In place: a copy of the origin would make each change copy its tables.
        switch state.origins[origin]!.schedule.assign(small: small, askingAgain: askingAgain) {
        case .use(let id): return .use(state.origins[origin]!.connections[id]!)
        case .adoptAhead: return .adopt(state.origins[origin]!.ahead!)
        case .wait: return .wait
        case .open:
            state.nextID += 1
            return .open(id: state.nextID)
        }
    }

    /// Opens a connection to `origin` ahead of any request, when it has none: connecting then
    /// overlaps what the caller does before its first request (a sync reads its store). The first
    /// request that comes meanwhile adopts it (``PipelineSchedule/openAhead()``).
    func openAhead(to origin: String, connect: @escaping @Sendable (_ id: Int) async throws -> PipelinedConnection) {
        let schedule = PipelineSchedule(connectionsPerHost: connectionsPerHost, depth: depth)
        state.withLock { state in
            guard !state.isShutDown else { return }
            if state.origins[origin] == nil { state.origins[origin] = Origin(schedule: schedule) }
            guard state.origins[origin]!.schedule.openAhead() else { return }
            state.nextID += 1
            let id = state.nextID
            // Made under the lock, so that a request adopting it finds it.
            state.origins[origin]!.ahead = Task {
                try await self.open(id, to: origin, connect: connect) {
                    $0.ahead = nil
                    return $0.schedule.aheadOpened(id)
                } failed: {
                    $0.ahead = nil
                    $0.schedule.aheadFailed(id)
                }
            }
        }
    }

    /// Opens connection `id` with `connect`, reporting to the origin with `opened` (whether to
    /// lend it) or `failed`, and wakes the requests that waited.
    private func open(
        _ id: Int,
        to origin: String,
        connect: (_ id: Int) async throws -> PipelinedConnection,
        opened: (inout Origin) -> Bool,
        failed: (inout Origin) -> Void
    ) async throws -> PipelinedConnection {
        let connection: PipelinedConnection
        do {
            connection = try await connect(id)
        } catch {
            wake(
                state.withLock { state in
                    guard state.origins[origin] != nil else { return [] }
                    failed(&state.origins[origin]!)
                    return state.origins[origin]!.takeWaiters(.all)
                }
            )
            throw error
        }
        let (added, waiters) = state.withLock { state -> (Bool, [CheckedContinuation<Lease, Never>]) in
            guard !state.isShutDown else { return (false, []) }
            // One that closed already is not lent again; its request learns that it closed.
            if opened(&state.origins[origin]!) {
                state.origins[origin]!.connections[id] = connection
            }
            // Requests that waited for a connection may now be sent on this one.
            return (true, state.origins[origin]!.takeWaiters(.all))
        }
        wake(waiters)
        guard added else {
            connection.channel.close(promise: nil)
            throw CancellationError()
        }
        return connection
    }

    /// A response on connection `id` ended: it has room for another request.
    func answered(_ id: Int, origin: String) {
        wake(
            state.withLock { state in
                guard let wake = state.origins[origin]?.schedule.answered(id) else { return [] }
                return state.origins[origin]!.takeWaiters(wake)
            }
        )
    }

    /// Connection `id` takes no more requests; `afterOneAnswer`, as ``PipelineSchedule/retired(_:afterOneAnswer:)``.
    func retired(_ id: Int, origin: String, afterOneAnswer: Bool) {
        wake(
            state.withLock { state in
                state.origins[origin]?.schedule.retired(id, afterOneAnswer: afterOneAnswer)
                state.origins[origin]?.connections[id] = nil
                return state.origins[origin]?.takeWaiters(.all) ?? []
            }
        )
    }

    /// Closes every connection; requests waiting for one fail.
    func shutDown() async {
        let (channels, waiters) = state.withLock { state in
            state.isShutDown = true
            let channels = state.origins.values.flatMap { $0.connections.values.map(\.channel) }
            let waiters = state.origins.values.flatMap(\.waiters)
            state.origins = [:]
            return (channels, waiters)
        }
        wake(waiters)
        for channel in channels { try? await channel.close() }
    }

    private func wake(_ waiters: [CheckedContinuation<Lease, Never>]) {
        for waiter in waiters { waiter.resume(returning: .askAgain) }
    }
}
