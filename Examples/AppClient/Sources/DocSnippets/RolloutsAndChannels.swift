import Foundation
import FreshAir

/// Stands for the app's own network policy.
enum Network { static func isOnWiFi() async -> Bool { true } }

enum RolloutsAndChannels {
    static func schedule(content: FreshAirContent) async {
        // snippet: schedule
        let schedule = SyncSchedule(interval: .seconds(3600), jitter: 0.2, isAllowed: { await Network.isOnWiFi() })
        for await result in schedule.runs(content) { print(result) }  // packages and repositories too
        // snippet: end
    }
}
