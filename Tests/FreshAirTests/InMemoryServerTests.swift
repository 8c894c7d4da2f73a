import Foundation
import FreshAir
import FreshAirTesting
import Testing

/// The rules about 304, resume, rollback and expiry, in milliseconds: the sync against
/// `FreshAirTesting`'s in-memory server (nginx and Ceph hold the same rules in the
/// integration suites).
@Suite("The in-memory server: the sync's rules without a network")
struct InMemoryServerTests {
    let server = InMemoryServer()
    let store: URL

    init() {
        store = FileManager.default.temporaryDirectory.appendingPathComponent("in-memory-\(UUID().uuidString)")
    }

    /// Publishes a bundle of `a.txt` (`text`) and a 400 KB `big.bin`, with digests and sizes.
    func publish(_ text: String, expires: Date? = nil) {
        let big = Data((0..<400_000).map { UInt8(truncatingIfNeeded: $0 &* 31 >> 2) })
        let files: [(String, Data)] = [("a.txt", Data(text.utf8)), ("big.bin", big)]
        let entries = files.map { name, data in
            let digest = ContentHashHex.sha256(data)
            return #"{"filename": "\#(name)", "sha": "\#(digest)", "size": \#(data.count)}"#
        }
        let expiry = expires.map { #", "expires": "\#($0.formatted(.iso8601))""# } ?? ""
        let manifest = #"{"format": 2\#(expiry), "files": [\#(entries.joined(separator: ", "))]}"#
        server.publish(Data(manifest.utf8), at: "App.freshair/manifest.json")
        for (name, data) in files { server.publish(data, at: "App.freshair/\(name)") }
    }

    func sync(_ configure: (inout SyncConfiguration) -> Void = { _ in }) -> BundleSync {
        var configuration = SyncConfiguration()
        configuration.retry = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(1))
        configure(&configuration)
        return BundleSync(
            remote: server.url("App.freshair/"),
            store: BundleStore(root: store),
            environment: ConditionEnvironment(),
            transport: server.transport,
            configuration: configuration
        )
    }

    func text(_ sync: BundleSync) -> String? {
        (try? Data(contentsOf: sync.store.liveLink.appendingPathComponent("a.txt"))).map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    @Test("An app's content from the in-memory server; nothing changed is one conditional request, a 304")
    func notModified() async throws {
        defer { try? FileManager.default.removeItem(at: store) }
        publish("one")
        let content = FreshAirContent(
            remote: server.url("App.freshair/"),
            folder: store,
            bundledIn: nil,
            environment: ConditionEnvironment(),
            transport: server.transport
        )
        #expect(try await content.run().outcome == .updated)
        let again = try await content.run()
        #expect(again.notModified && again.requests == 1)
        #expect(server.requests.last == .init(path: "App.freshair/manifest.json", status: 304, conditional: true))
    }

    @Test("A body cut mid-way is resumed with Range from where it stopped")
    func resume() async throws {
        defer { try? FileManager.default.removeItem(at: store) }
        publish("one")
        server.cut("App.freshair/big.bin", after: 100_000)
        #expect(try await sync().run().outcome == .updated)
        let big = server.requests.filter { $0.path == "App.freshair/big.bin" }
        #expect(big.map(\.status) == [200, 206], "the first answer cut after its head")
        #expect(big.last?.range == "bytes=100000-")
    }

    @Test("Rolled back: the next check asks about what was rolled back from, and keeps the rollback")
    func rollback() async throws {
        defer { try? FileManager.default.removeItem(at: store) }
        publish("one")
        let sync = sync()
        try await sync.run()
        publish("two")
        try await sync.run()
        #expect(text(sync) == "two")
        try await sync.store.rollBack()
        let kept = try await sync.run()
        #expect(kept.outcome == .keptAfterRollback && kept.requests == 1)
        #expect(text(sync) == "one")
        publish("three")
        #expect(try await sync.run().outcome == .updated)
        #expect(text(sync) == "three")
    }

    @Test("An expired manifest is refused by the device's clock, with no wait; offline keeps the live version")
    func expiryAndOffline() async throws {
        defer { try? FileManager.default.removeItem(at: store) }
        publish("one", expires: Date().addingTimeInterval(3600))
        try await sync().run()
        publish("two", expires: Date().addingTimeInterval(3600))
        let later = sync { $0.environment.now = { Date().addingTimeInterval(2 * 86_400) } }
        await #expect {
            try await later.run()
        } throws: { error in
            guard case .expired = (error as? FreshAirError)?.manifestError?.problem else { return false }
            return true
        }
        #expect(text(later) == "one")

        server.isOffline = true
        await #expect {
            try await sync().run()
        } throws: { error in
            (error as? FreshAirError)?.code == .transport
        }
        #expect(text(later) == "one")
        server.isOffline = false
        #expect(try await sync().run().outcome == .updated)
        #expect(text(later) == "two")
    }
}

/// SHA-256 in hex, for manifests written by hand.
enum ContentHashHex {
    static func sha256(_ data: Data) -> String {
        ContentHash.of(data, using: .sha256).hex
    }
}
