package import Foundation
package import FreshAir
import FreshAirAsyncHTTPClient

/// `breeze demo`: the whole sync story on the built-in example, against a real server on
/// loopback, narrated for a newcomer.
///
/// 1. Serve ``ExampleBundle`` and sync it as app version 0.9: Embed1 is selected.
/// 2. Edit one file on the server and sync again: only that file (and the two manifests
///    that list its hash) move.
/// 3. Check again: one request, answered `304 Not Modified`.
/// 4. Upgrade the app to 1.1: re-planned from the stored manifests, Embed2 replaces Embed1.
package struct DemoScenario {
    /// Where the demo writes its server folder and the synced copy.
    package let workspace: URL
    private let say: (String) -> Void

    package init(workspace: URL, say: @escaping (String) -> Void) {
        self.workspace = workspace
        self.say = say
    }

    /// What the demo observed, for tests.
    package struct Outcome: Sendable {
        package var first: SyncSummary
        package var afterEdit: SyncSummary
        package var unchanged: SyncSummary
        package var upgraded: SyncSummary
        /// Requests the server saw during the unchanged check, with their statuses.
        package var unchangedExchanges: [StaticFileServer.Exchange]
        package var liveFiles: [String]
    }

    @discardableResult
    package func run() async throws -> Outcome {
        let published = workspace.appendingPathComponent("server")
        let local = workspace.appendingPathComponent("App Content")
        try ExampleBundle.write(in: published)
        let exchanges = ExchangeLog()
        let server = try await StaticFileServer(root: published).start(onRequest: exchanges.record)
        do {
            // breeze's own transport: its release build carries no URLSession (no libcurl).
            let outcome = try await PipeliningTransport.withTransport { client in
                try await narrate(
                    server: server,
                    published: published,
                    local: local,
                    exchanges: exchanges,
                    transport: Transport(client)
                )
            }
            await server.stop()
            return outcome
        } catch {
            await server.stop()
            throw error
        }
    }

    private func narrate(
        server: RunningServer,
        published: URL,
        local: URL,
        exchanges: ExchangeLog,
        transport: Transport
    ) async throws -> Outcome {
        let remote = server.url.appendingPathComponent(ExampleBundle.name + "/")
        let store = BundleStore(root: workspace.appendingPathComponent(".store"), liveLink: local)
        var sync = BundleSync(
            remote: remote,
            store: store,
            environment: ExampleBundle.environment(appVersion: "0.9"),
            transport: transport
        )
        sync.configuration.retry = .none

        say("FreshAir demo: keeping a local copy of a bundle current from a plain web server.\n")
        say("Published \(ExampleBundle.name) in \(published.path)")
        say("Serving it at \(remote) (the server `breeze serve` runs: ETag, Last-Modified, 304, Range).\n")

        say("1. First sync, as an iOS 9 device running app version 0.9")
        let first = try await sync.run()
        say("   \(first.oneLine)")
        say("   Downloaded: \(first.downloaded.joined(separator: ", "))")
        say("   Embed1 is selected (appVersion < 1.0), Embed2 is not. Live files in \(local.path):")
        for file in try liveFiles(local) { say("     \(file)") }

        say("\n2. The publisher edits Embed1.freshair/bar.md and re-hashes the manifests")
        try ExampleBundle.write(
            in: published,
            overrides: ["Embed1.freshair/bar.md": "# Bar\n\nEdited on the server.\n"]
        )
        let afterEdit = try await sync.run()
        say("   \(afterEdit.oneLine)")
        say("   Downloaded: \(afterEdit.downloaded.joined(separator: ", "))")
        say("   Only bar.md moved among the content files (the two manifests carry its new hash); foo.md was reused.")

        say("\n3. Checking again with nothing changed")
        exchanges.removeAll()
        let unchanged = try await sync.run()
        let seen = exchanges.all
        say("   \(unchanged.oneLine)")
        say("   The server saw: " + seen.map { "\($0.method) \($0.path) → \($0.status)" }.joined(separator: "; "))

        say("\n4. The app is upgraded to 1.1: re-planned from the stored manifests")
        sync.environment["appVersion"] = "1.1"
        let upgraded = try await sync.run()
        say("   \(upgraded.oneLine)")
        say(
            "   Downloaded: \(upgraded.downloaded.joined(separator: ", ")); removed: \(upgraded.removed.joined(separator: ", "))"
        )
        let files = try liveFiles(local)
        say("   Live files now:")
        for file in files { say("     \(file)") }
        say("\nEvery update was assembled beside the live copy and switched in one atomic step;")
        say("the previous version stays on disk for rollBack(). Store: \(store.root.path)")
        return Outcome(
            first: first,
            afterEdit: afterEdit,
            unchanged: unchanged,
            upgraded: upgraded,
            unchangedExchanges: seen,
            liveFiles: files
        )
    }

    private func liveFiles(_ folder: URL) throws -> [String] {
        let root = folder.resolvingSymlinksInPath()
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [] }
        return walker.compactMap { $0 as? String }
            .filter { !Self.isDirectory(root.appendingPathComponent($0)) }
            .sorted()
    }

    private static func isDirectory(_ url: URL) -> Bool {
        var flag: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &flag) && flag.boolValue
    }
}
