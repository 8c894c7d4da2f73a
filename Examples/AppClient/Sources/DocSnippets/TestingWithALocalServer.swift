import Foundation
import FreshAir
import FreshAirTesting

enum TestingWithALocalServer {
    static func fixture(resources: Bundle, temporaryFolder: URL) async throws {
        // snippet: fixture
        let content = FreshAirContent(
            remote: resources.url(forResource: "App", withExtension: "freshair")!,  // a file:// bundle folder
            folder: temporaryFolder,
            bundledIn: nil
        )
        try await content.run()
        // snippet: end
    }

    /// What an app's test checks, with `FreshAirTesting`: the first launch installs, the next
    /// check costs one conditional request, and a server that is down keeps the content.
    static func inMemory(bundle: URL, store: URL) async throws -> Bool {
        // snippet: in-memory
        let server = InMemoryServer()
        try server.publish(folder: bundle, at: "App.freshair")  // a bundle made with breeze
        let content = FreshAirContent(
            remote: server.url("App.freshair/"),
            folder: store,
            bundledIn: nil,
            transport: server.transport
        )
        try await content.run()
        let again = try await content.run()
        let oneRequest = again.notModified && server.requests.last?.status == 304

        server.answer("App.freshair/manifest.json", with: 503)  // or cut(_:after:), isOffline
        let keptWhenDown = (try? await content.run()) == nil && content.store.liveVersionID != nil
        // snippet: end
        return oneRequest && keptWhenDown
    }

    /// Retries on a clock the test drives: a server down for two minutes costs no real time.
    static func drivenTime(bundle: URL, store: URL) async throws -> Bool {
        // snippet: test-clock
        let server = InMemoryServer()
        try server.publish(folder: bundle, at: "App.freshair")
        server.answer("App.freshair/manifest.json", with: 503)  // down, with Retry-After: 1

        let clock = TestClock()
        var configuration = SyncConfiguration()
        clock.drive(&configuration)  // sleeps wait for clock.advance(by:), not for real time
        let content = FreshAirContent(
            remote: server.url("App.freshair/"),
            folder: store,
            bundledIn: nil,
            configuration: configuration,
            transport: server.transport
        )
        let run = Task { try await content.run() }
        await clock.waitForSleepers(1)  // the first retry is waiting
        server.answer("App.freshair/manifest.json", with: nil)
        clock.advance(by: .seconds(1))
        let installed = try await run.value.outcome == .updated
        // snippet: end
        return installed && clock.sleeps == [.seconds(1)]
    }

}
