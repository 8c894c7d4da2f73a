public import Foundation
public import FreshAir
import Synchronization

/// Time a test drives: the clocks, sleep and random numbers a sync, a schedule or a retry reads,
/// with nothing waiting on the real clock.
///
/// A sleep suspends until ``advance(by:)`` moves the clock past its end; ``sleeps`` records
/// every wait asked for. Random draws take the middle of their range unless ``randomFraction``
/// says otherwise, so a back-off's length is known in advance.
///
/// ```swift
/// let clock = TestClock()
/// var configuration = SyncConfiguration()
/// clock.drive(&configuration)
/// let sync = Task { try await FreshAirContent(remote: url, configuration: configuration).update() }
/// await clock.waitForSleepers(1)        // a retry is waiting
/// clock.advance(by: .seconds(120))      // its Retry-After has passed
/// ```
public final class TestClock: Sendable {
    private struct Sleeper {
        var id: Int
        var end: Duration
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Date
        var uptime: Duration = .zero
        var sleepers: [Sleeper] = []
        var cancelled: Set<Int> = []
        var nextID = 0
        var sleeps: [Duration] = []
        var randomFraction = 0.5
    }

    private let state: Mutex<State>

    /// A clock reading `now` on the wall, at uptime zero.
    public init(now: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = Mutex(State(now: now))
    }

    /// The wall clock's reading.
    public var now: Date { state.withLock { $0.now } }
    /// Every wait asked for so far, in order.
    public var sleeps: [Duration] { state.withLock { $0.sleeps } }
    /// How many waits are suspended now.
    public var pendingSleepers: Int { state.withLock { $0.sleepers.count } }
    /// Where in its range each random draw falls, 0 (lowest) to 1 (highest); 0.5 at first.
    public var randomFraction: Double {
        get { state.withLock { $0.randomFraction } }
        set { state.withLock { $0.randomFraction = min(max(newValue, 0), 1) } }
    }

    /// Moves both clocks on by `duration` and wakes every sleep that has ended.
    public func advance(by duration: Duration) {
        let woken = state.withLock { state -> [Sleeper] in
            state.uptime += duration
            state.now = state.now.addingTimeInterval(duration.seconds)
            let (ended, waiting) = state.sleepers.partitioned { $0.end <= state.uptime }
            state.sleepers = waiting
            return ended
        }
        for sleeper in woken { sleeper.continuation.resume() }
    }

    /// Returns once at least `count` sleeps are suspended (polling the real clock briefly).
    public func waitForSleepers(_ count: Int) async {
        while pendingSleepers < count { try? await Task.sleep(for: .milliseconds(1)) }
    }

    /// Makes every run with `configuration` read this clock.
    public func drive(_ configuration: inout SyncConfiguration) {
        configuration.environment = environment
    }

    /// `schedule`, reading this clock.
    public func driving(_ schedule: SyncSchedule) -> SyncSchedule {
        var schedule = schedule
        schedule.environment = environment
        return schedule
    }

    package var environment: SyncEnvironment {
        SyncEnvironment(
            now: { [self] in now },
            uptime: { [self] in state.withLock { $0.uptime } },
            sleep: { [self] duration in try await sleep(duration) },
            random: { [self] range in range.lowerBound + (range.upperBound - range.lowerBound) * randomFraction }
        )
    }

    private func sleep(_ duration: Duration) async throws {
        let id = state.withLock { state in
            state.sleeps.append(duration)
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> (any Error)?? in
                    if state.cancelled.remove(id) != nil { return .some(CancellationError()) }
                    if duration <= .zero { return .some(nil) }
                    state.sleepers.append(Sleeper(id: id, end: state.uptime + duration, continuation: continuation))
                    return nil
                }
                switch outcome {
                case .some(.some(let error)): continuation.resume(throwing: error)
                case .some(.none): continuation.resume()
                case .none: break
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}

extension Array {
    fileprivate func partitioned(by belongsFirst: (Element) -> Bool) -> ([Element], [Element]) {
        (filter(belongsFirst), filter { !belongsFirst($0) })
    }
}
