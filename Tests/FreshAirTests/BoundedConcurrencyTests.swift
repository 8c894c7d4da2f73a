import Synchronization
import Testing

@testable import FreshAir

/// ``forEachConcurrently(_:width:weight:work:take:)``: how many items run at once, counted by
/// weight, and in what order they start.
@Suite("Bounded concurrency by weight")
struct BoundedConcurrencyTests {
    /// Runs `weights` (one item each) through width `width`; answers the largest total weight
    /// seen running at once and the order items started in.
    static func run(_ weights: [Int], width: Int) async throws -> (peak: Int, events: [String]) {
        let state = Mutex((running: 0, peak: 0, events: [String]()))
        try await forEachConcurrently(Array(weights.indices), width: width, weight: { weights[$0] }) { item in
            state.withLock { state in
                state.running += min(weights[item], width)
                state.peak = max(state.peak, state.running)
                state.events.append("start \(item)")
            }
            try await Task.sleep(for: .milliseconds(2))
            state.withLock { state in
                state.running -= min(weights[item], width)
                state.events.append("end \(item)")
            }
            return item
        } take: { _ in
        }
        return state.withLock { ($0.peak, $0.events) }
    }

    @Test("Small items fill the width; a heavy one counts for its weight, and items start in order")
    func weights() async throws {
        let weights = Array(repeating: 1, count: 20) + [8] + Array(repeating: 1, count: 20)
        let (peak, events) = try await Self.run(weights, width: 8)
        #expect(peak == 8, "the width was used, never passed")
        #expect(events.filter { $0.hasPrefix("start") }.count == 41)
        // The heavy item starts once all before it have ended, and runs alone: those after it
        // wait with it.
        let heavyStart = try #require(events.firstIndex(of: "start 20"))
        let heavyEnd = try #require(events.firstIndex(of: "end 20"))
        #expect(events[..<heavyStart].filter { $0.hasPrefix("end") }.count == 20)
        #expect(heavyEnd == heavyStart + 1, "\(events[heavyStart...heavyEnd])")
    }

    @Test("An item heavier than the width still runs, alone")
    func heavierThanWidth() async throws {
        let (peak, events) = try await Self.run([1, 30, 1], width: 4)
        #expect(peak <= 4)
        #expect(events.filter { $0.hasPrefix("end") }.count == 3)
    }

    @Test("Weight 1 everywhere is the plain bound")
    func plain() async throws {
        let (peak, _) = try await Self.run(Array(repeating: 1, count: 50), width: 5)
        #expect(peak == 5)
    }
}
