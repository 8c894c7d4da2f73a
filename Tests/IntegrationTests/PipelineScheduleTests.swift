import Testing

@testable import FreshAirAsyncHTTPClient

/// ``PipelineSchedule``'s decisions, counts alone: which connection each request goes to.
@Suite("Pipeline schedule: idle first, then new, then small behind small; never behind a large answer")
struct PipelineScheduleTests {
    /// A schedule with `open` connections (ids 1…), each with nothing in flight.
    static func schedule(connections: Int = 2, depth: Int = 3, open: Int = 2) -> PipelineSchedule {
        var schedule = PipelineSchedule(connectionsPerHost: connections, depth: depth)
        for id in 1...open {
            #expect(schedule.assign(small: true, askingAgain: false) == .open)
            schedule.opened(id, small: true)
        }
        for id in 1...open { _ = schedule.answered(id) }
        return schedule
    }

    @Test("An idle connection first, a new one next, then small requests behind small ones up to the depth")
    func order() {
        var schedule = PipelineSchedule(connectionsPerHost: 2, depth: 3)
        #expect(schedule.assign(small: true, askingAgain: false) == .open)
        schedule.opened(1, small: true)
        // One connection busy, room for another: opened rather than queued behind.
        #expect(schedule.assign(small: true, askingAgain: false) == .open)
        #expect(schedule.assign(small: true, askingAgain: false) == .use(1), "queued while the second opens")
        schedule.opened(2, small: true)
        #expect(schedule.assign(small: true, askingAgain: false) == .use(2), "the least busy")
        // Then one each way, whichever is less busy, until both are at the depth.
        _ = schedule.assign(small: true, askingAgain: false)
        _ = schedule.assign(small: true, askingAgain: false)
        #expect(schedule.connections.values.map(\.inFlight) == [3, 3])
        #expect(schedule.assign(small: true, askingAgain: false) == .wait, "both at the depth")
        #expect(schedule.answered(2) == .one)
        #expect(schedule.assign(small: true, askingAgain: true) == .use(2))
    }

    @Test("A large request takes only an idle connection, and nothing goes behind it")
    func largeAlone() {
        var schedule = Self.schedule()
        guard case .use(let large) = schedule.assign(small: false, askingAgain: false) else {
            Issue.record("an idle connection was there")
            return
        }
        let other = large == 1 ? 2 : 1
        #expect(schedule.connections[large]?.large == true)
        #expect(schedule.assign(small: true, askingAgain: false) == .use(other), "the idle one")
        #expect(schedule.assign(small: true, askingAgain: false) == .use(other), "behind the small one, not the large")
        #expect(schedule.assign(small: true, askingAgain: false) == .use(other))
        #expect(schedule.assign(small: true, askingAgain: false) == .wait, "never behind the large answer")
        #expect(schedule.answered(large) == .one)
        #expect(schedule.connections[large] == PipelineSchedule.Connection(inFlight: 0, large: false))
        #expect(schedule.assign(small: true, askingAgain: true) == .use(large), "a connection again once answered")
    }

    @Test("While a large request waits, small ones wait too, and the large one gets the first idle connection")
    func largeWaitingGoesFirst() {
        var schedule = Self.schedule(depth: 4)
        for _ in 0..<4 { _ = schedule.assign(small: true, askingAgain: false) }
        // Both connections busy with small answers: the large request waits, and so does every
        // small one after it, though the connections have room behind.
        #expect(schedule.assign(small: false, askingAgain: false) == .wait)
        #expect(schedule.largeWaiting == 1)
        #expect(schedule.assign(small: true, askingAgain: false) == .wait)
        #expect(schedule.answered(1) == .all, "every waiter looks again")
        #expect(schedule.assign(small: false, askingAgain: true) == .wait, "connection 1 still has one in flight")
        #expect(schedule.answered(1) == .all)
        #expect(schedule.assign(small: false, askingAgain: true) == .use(1))
        #expect(schedule.largeWaiting == 0)
        #expect(schedule.assign(small: true, askingAgain: true) == .use(2), "small ones go on, not behind it")
    }

    @Test("A retired connection takes no more; a failed open makes room for another")
    func retiredAndFailed() {
        var schedule = Self.schedule(connections: 2, depth: 2, open: 1)
        _ = schedule.assign(small: true, askingAgain: false)
        schedule.retired(1)
        #expect(schedule.connections[1] == nil)
        #expect(schedule.answered(1) == PipelineSchedule.Wake.none, "answers from it no longer count")
        #expect(schedule.assign(small: true, askingAgain: false) == .open)
        #expect(schedule.assign(small: true, askingAgain: false) == .open)
        #expect(schedule.assign(small: true, askingAgain: false) == .wait)
        schedule.openFailed(3)
        #expect(schedule.assign(small: true, askingAgain: true) == .open)
    }

    @Test("A connection that closes before its opener reports it open is never lent")
    func retiredWhileOpening() {
        var schedule = PipelineSchedule(connectionsPerHost: 2, depth: 4)
        #expect(schedule.assign(small: true, askingAgain: false) == .open)
        #expect(schedule.assign(small: true, askingAgain: false) == .open)
        // The server hangs up on connection 1 as soon as it is accepted: its event loop retires
        // it before the task that opened it reports it open.
        schedule.retired(1)
        let usable = schedule.opened(1, small: true)
        #expect(!usable)
        #expect(schedule.connections[1] == nil)
        #expect(schedule.assign(small: true, askingAgain: false) == .open, "its place is free")
        // Connection 2 closes before it opened at all: the mark goes with its failure.
        schedule.retired(2)
        schedule.openFailed(2)
        #expect(schedule.retiredWhileOpening.isEmpty)
        let third = schedule.opened(3, small: true)
        #expect(third)
        #expect(Array(schedule.connections.keys) == [3], "the one connection that stayed open")
    }

    @Test("A server that closes each connection after its first answer: nothing more is sent ahead")
    func serverWithoutKeepAlive() {
        var schedule = Self.schedule(connections: 2, depth: 4)
        for _ in 0..<6 { _ = schedule.assign(small: true, askingAgain: false) }
        schedule.retired(1, afterOneAnswer: true)
        #expect(schedule.depth == 1)
        #expect(schedule.assign(small: true, askingAgain: false) == .open)
        schedule.opened(3, small: true)
        #expect(schedule.assign(small: true, askingAgain: false) == .wait, "not behind the new one, nor behind 2")
    }

    @Test("Depth 1 never queues a request behind another")
    func depthOne() {
        var schedule = Self.schedule(depth: 1)
        #expect(schedule.assign(small: true, askingAgain: false) != .wait)
        #expect(schedule.assign(small: true, askingAgain: false) != .wait)
        #expect(schedule.assign(small: true, askingAgain: false) == .wait)
    }

    @Test("A connection opened ahead: the first request adopts it, the next opens its own; unclaimed, it is idle")
    func openedAhead() {
        var schedule = PipelineSchedule(connectionsPerHost: 2, depth: 4)
        let opens = schedule.openAhead()
        #expect(opens)
        let opensASecond = schedule.openAhead()
        #expect(!opensASecond, "one at a time")
        #expect(schedule.assign(small: false, askingAgain: false) == .adoptAhead)
        #expect(schedule.assign(small: true, askingAgain: false) == .open, "the second does not wait for it")
        let lent = schedule.aheadOpened(1)
        #expect(lent)
        #expect(
            schedule.connections[1] == .init(inFlight: 1, large: true),
            "in flight for the large request that adopted it"
        )
        #expect(schedule.ahead == nil)
        let opensAgain = schedule.openAhead()
        #expect(!opensAgain, "not to an origin with connections")

        var unclaimed = PipelineSchedule(connectionsPerHost: 2, depth: 4)
        let opensIdle = unclaimed.openAhead()
        #expect(opensIdle)
        let idleLent = unclaimed.aheadOpened(1)
        #expect(idleLent)
        #expect(unclaimed.connections[1] == .init(inFlight: 0, large: false))
        #expect(unclaimed.assign(small: true, askingAgain: false) == .use(1), "idle, so lent first")
    }

    @Test("A connection opened ahead that fails fails its adopter alone; one that closes while opening is not lent")
    func aheadFailedOrClosed() {
        var schedule = PipelineSchedule(connectionsPerHost: 1, depth: 4)
        let opensForOne = schedule.openAhead()
        #expect(opensForOne)
        #expect(schedule.assign(small: true, askingAgain: false) == .adoptAhead)
        #expect(schedule.assign(small: true, askingAgain: false) == .wait, "the one connection is opening")
        schedule.aheadFailed(1)
        #expect(schedule.ahead == nil)
        #expect(schedule.assign(small: true, askingAgain: true) == .open, "the waiter opens one of its own")

        var closed = PipelineSchedule(connectionsPerHost: 1, depth: 4)
        let opensToClose = closed.openAhead()
        #expect(opensToClose)
        closed.retired(1)
        let closedLent = closed.aheadOpened(1)
        #expect(!closedLent)
        #expect(closed.connections.isEmpty)
        #expect(closed.assign(small: true, askingAgain: false) == .open)
    }
}
