import BreezeKit
import Foundation
import FreshAir
import Testing

/// A hostile repository index costs a device little before it is refused: unsigned where keys
/// are pinned, it is refused unparsed; too long, it is refused on a count of its bytes.
@Suite("A huge or unsigned repository index is refused before it is parsed")
struct IndexCapTests {
    /// An index listing `count` bundles, with `extra` members before `"bundles"`.
    static func index(bundles count: Int, extra: String = "") -> String {
        var text = "{\(extra)\"bundles\": {"
        text.reserveCapacity(count * 24 + 64)
        for number in 0..<count {
            if number > 0 { text += "," }
            text += "\"b\(number)\": {\"version\": 1}"
        }
        return text + "}}"
    }

    /// Syncs the repository `id` from `server` with `key` pinned; returns the problem it met.
    static func problem(_ id: String, on server: PublishedFolder, key: SigningKey) async -> ManifestError.Problem? {
        var configuration = SyncConfiguration()
        configuration.trustedKeys = [key.publicKey]
        configuration.retry = RetryPolicy(maxAttempts: 1)
        guard let device = try? TemporaryFolder("index-cap") else { return nil }
        do {
            _ = try await Repository(
                source: server.url,
                id: id,
                directory: device.path("bundles"),
                stateFolder: device.path("state"),
                configuration: configuration
            ).update()
        } catch {
            return (error as? FreshAirError)?.manifestError?.problem
        }
        return nil
    }

    @Test("1,000,000 bundles, unsigned, keys pinned: refused as unsigned without a parse")
    func unsignedMillion() async throws {
        try await PublishedFolder.with(.nginx) { server in
            try PublishedText.write(
                Self.index(bundles: 1_000_000),
                to: server.root.appendingPathComponent("huge/index.json")
            )
            let problem = await Self.problem("huge", on: server, key: SigningKey.generate())
            guard case .unsigned = problem else {
                Issue.record("\(String(describing: problem))")
                return
            }
        }
    }

    @Test("More bundles than RepositoryIndex.maxBundles, naming signatures: refused on the count")
    func overTheCap() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let text = Self.index(bundles: RepositoryIndex.maxBundles + 1, extra: "\"signatures\": [], ")
            try PublishedText.write(text, to: server.root.appendingPathComponent("long/index.json"))
            let problem = await Self.problem("long", on: server, key: SigningKey.generate())
            guard case .unexpectedShape(let detail) = problem, detail.contains("more than 100000 bundles") else {
                Issue.record("\(String(describing: problem))")
                return
            }
        }
    }
}
