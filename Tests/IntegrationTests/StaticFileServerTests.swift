import BreezeKit
import Foundation
import FreshAir
import Testing

/// `breeze serve` answers as the static hosting FreshAir is made for: strong validators that
/// `If-None-Match` and `If-Range` can use, and never part of a multi-range request passed off
/// as the whole answer.
@Suite("breeze serve: validators, ranges and cache headers")
struct StaticFileServerTests {
    func get(_ url: URL, _ headers: [(name: String, value: String)] = []) async throws -> (HTTPResponseHead, [UInt8]) {
        try await URLSessionTransport().get(HTTPGetRequest(url: url, headers: headers)) { head, body in
            var bytes: [UInt8] = []
            for try await chunk in body { bytes += chunk }
            return (head, bytes)
        }
    }

    @Test(
        "A multi-range request gets the whole file; a strong ETag serves If-None-Match and If-Range; a weak If-Range never matches"
    )
    func rangesAndValidators() async throws {
        let folder = try TemporaryFolder("serve")
        let data = (0..<100_000).map { _ in UInt8.random(in: 0...255) }
        try Data(data).write(to: folder.path("f.bin"))
        try Data("[]".utf8).write(to: folder.path("manifest.json"))
        let server = try await StaticFileServer(root: folder.url).start()
        defer { Task { await server.stop() } }
        let url = server.url.appendingPathComponent("f.bin")

        let (whole, body) = try await get(url)
        let etag = try #require(whole["ETag"])
        #expect(!etag.hasPrefix("W/") && etag.hasPrefix("\""), "\(etag)")
        #expect(body == data)
        #expect(whole["Cache-Control"] == CachePolicy.defaultContent)

        let (multi, multiBody) = try await get(url, [("Range", "bytes=0-9,100-109")])
        #expect(multi.status == 200 && multiBody == data, "the whole file, not the first range alone")

        #expect(try await get(url, [("If-None-Match", etag)]).0.status == 304)
        let (resumed, part) = try await get(url, [("Range", "bytes=10-19"), ("If-Range", etag)])
        #expect(resumed.status == 206 && part == Array(data[10...19]))
        let (weak, weakBody) = try await get(url, [("Range", "bytes=10-19"), ("If-Range", "W/" + etag)])
        #expect(weak.status == 200 && weakBody == data)
        let (other, otherBody) = try await get(url, [("Range", "bytes=10-19"), ("If-Range", "\"other\"")])
        #expect(other.status == 200 && otherBody == data)

        let (manifest, _) = try await get(server.url.appendingPathComponent("manifest.json"))
        #expect(manifest["Cache-Control"] == CachePolicy.defaultDocuments)
    }
}
