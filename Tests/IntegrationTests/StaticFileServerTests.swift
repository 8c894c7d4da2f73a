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
            for try await chunk in body { bytes += chunk.bytes }
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

    /// What curl saw of one exchange: the status, `Content-Range`, `Content-Length` and the body.
    struct Seen: Equatable, CustomStringConvertible {
        var status: Int
        var contentRange: String?
        var contentLength: String?
        var body: [UInt8]
        var description: String {
            "\(status) range=\(contentRange ?? "-") length=\(contentLength ?? "-") \(body.count) bytes"
        }
    }

    /// Asks with curl, on a connection of its own, and reads the answer as curl reads it.
    func curl(_ url: URL, range: String, in folder: TemporaryFolder) async throws -> Seen {
        let name = UUID().uuidString
        let output = try await shell(
            "curl -s -o \(name).body -D \(name).head -w '%{http_code}' -H 'Range: \(range)' '\(url.absoluteString)'",
            in: folder.url
        )
        let head = try String(contentsOf: folder.path("\(name).head"), encoding: .utf8)
        func field(_ name: String) -> String? {
            head.split(separator: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
        }
        let body = (try? Data(contentsOf: folder.path("\(name).body"))).map(Array.init) ?? []
        return Seen(
            status: Int(output) ?? 0,
            contentRange: field("Content-Range"),
            contentLength: field("Content-Length"),
            body: body
        )
    }

    /// nginx and breeze serve, side by side on the same folder: a 100,000-byte file and an empty one.
    func sideBySide(_ body: (_ ours: URL, _ nginx: URL, _ folder: TemporaryFolder) async throws -> Void) async throws {
        let folder = try TemporaryFolder("serve-ranges")
        let content = folder.url.appendingPathComponent("content")
        try FileManager.default.createDirectory(at: content, withIntermediateDirectories: true)
        let data = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        try Data(data).write(to: content.appendingPathComponent("f.bin"))
        try Data().write(to: content.appendingPathComponent("empty.bin"))
        let nginx = try Nginx(serving: content)
        defer { nginx.stop() }
        let server = try await StaticFileServer(root: content).start()
        defer { Task { await server.stop() } }
        try await body(server.url, nginx.url, folder)
    }

    @Test(
        "Ranges are answered as nginx answers them: suffixes, past the end (416), open and closed, other units",
        arguments: [
            "bytes=-5", "bytes=-0", "bytes=-200000", "bytes=0-0", "bytes=99999-", "bytes=100000-", "bytes=100001-",
            "bytes=10-19", "bytes=99990-200000", "items=0-5", "bytes= 3-7",
        ]
    )
    func rangesAsNginx(range: String) async throws {
        try await sideBySide { ours, nginx, folder in
            for file in ["f.bin", "empty.bin"] where !(file == "empty.bin" && range == "bytes=0-0") {
                var mine = try await curl(ours.appendingPathComponent(file), range: range, in: folder)
                var theirs = try await curl(nginx.appendingPathComponent(file), range: range, in: folder)
                if theirs.status == 416 {  // nginx adds an HTML page to its 416; the status and range are what count
                    (mine.body, mine.contentLength, theirs.body, theirs.contentLength) = ([], nil, [], nil)
                }
                #expect(mine == theirs, "\(file), Range: \(range): breeze serve \(mine), nginx \(theirs)")
            }
        }
    }

    @Test(
        "Where nginx departs from RFC 9110, breeze serve follows the RFC (and nginx still does what this test says)",
        arguments: [
            // A range whose last byte comes before its first is invalid: the Range is ignored (14.1.1, 14.2).
            ("f.bin", "bytes=5-2", 200, 416),
            // Bad syntax is ignored too.
            ("f.bin", "bytes=abc", 200, 416),
            // A last byte past the end means the end (14.1.2), however many digits it has.
            ("f.bin", "bytes=0-99999999999999999999", 206, 416),
            // No range of an empty file can be satisfied (nginx ignores the Range instead).
            ("empty.bin", "bytes=0-0", 416, 200),
        ]
    )
    func rangesPerRFC(file: String, range: String, ours: Int, nginxStatus: Int) async throws {
        try await sideBySide { server, nginx, folder in
            let mine = try await curl(server.appendingPathComponent(file), range: range, in: folder)
            #expect(mine.status == ours, "breeze serve: \(mine)")
            if ours == 206 { #expect(mine.contentRange == "bytes 0-99999/100000" && mine.body.count == 100_000) }
            if ours == 200 { #expect(mine.contentRange == nil && mine.contentLength == String(mine.body.count)) }
            #expect(try await curl(nginx.appendingPathComponent(file), range: range, in: folder).status == nginxStatus)
        }
    }

    @Test("Several ranges get the whole file (RFC 9110 lets a server ignore them; nginx sends multipart)")
    func severalRanges() async throws {
        let folder = try TemporaryFolder("serve-ranges")
        let data = (0..<1_000).map { UInt8(truncatingIfNeeded: $0) }
        try Data(data).write(to: folder.path("f.bin"))
        let server = try await StaticFileServer(root: folder.url).start()
        defer { Task { await server.stop() } }
        for range in ["bytes=0-1,3-4", "bytes=-5,0-0", "bytes=2000-,0-1"] {
            let seen = try await curl(server.url.appendingPathComponent("f.bin"), range: range, in: folder)
            #expect(seen.status == 200 && seen.body == data && seen.contentLength == "1000", "\(range): \(seen)")
        }
    }

    @Test(
        "ByteRange reads RFC 9110's forms",
        arguments: [
            ("bytes=-5", 100, ByteRange.part(95...99)), ("bytes=-500", 100, .part(0...99)),
            ("bytes=-0", 100, .unsatisfiable),
            ("bytes=100-", 100, .unsatisfiable), ("bytes=99-", 100, .part(99...99)), ("bytes=0-", 0, .unsatisfiable),
            ("bytes=-1", 0, .whole), ("bytes=5-2", 100, .whole), ("bytes=1-2,4-5", 100, .whole),
            ("bytes=0-99999999999999999999999", 100, .part(0...99)), ("bytes=x-1", 100, .whole),
            ("pages=1-2", 100, .whole),
        ] as [(String, Int64, ByteRange)]
    )
    func byteRange(header: String, size: Int64, expected: ByteRange) {
        #expect(ByteRange.resolve(header, size: size) == expected)
    }

    @Test("breeze serve names what a device can sync from the folder: bundles, repositories by their index, packages")
    func servedContent() throws {
        let site = try TemporaryFolder("served-content")
        let files = [
            "C.freshair/manifest.json", "apps/D.freshair/manifest.json", "repos/main/index.json",
            "repos/main/emoji-1.tar.gz", "content.tgz", "content.tgz.sig", "notes.txt",
            ".hidden.freshair/manifest.json",
            "apps/readme.txt", "apps/old.zip",
        ]
        for path in files {
            try FileManager.default.createDirectory(
                at: site.path(path).deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try Data("[]".utf8).write(to: site.path(path))
        }
        let base = URL(string: "http://127.0.0.1:8080/")!
        let items = ServedContent.items(in: site.url, servedAt: base)
        #expect(
            items.map { "\($0.kind) \($0.url.absoluteString)" } == [
                "bundle http://127.0.0.1:8080/C.freshair/", "bundle http://127.0.0.1:8080/apps/D.freshair/",
                "package http://127.0.0.1:8080/apps/old.zip", "package http://127.0.0.1:8080/content.tgz",
                "repository http://127.0.0.1:8080/repos/main/index.json",
            ]
        )
        // A bundle served as the root is the root's URL.
        let bundle = ServedContent.items(in: site.path("C.freshair"), servedAt: base)
        #expect(bundle.map(\.kind) == [.bundle] && bundle.map(\.url) == [base])
        let lines = ServedContent.syncLines(items, limit: 2)
        #expect(lines.count == 4 && lines[1] == "  breeze sync http://127.0.0.1:8080/C.freshair/ DIR    (a bundle)")
        #expect(lines.last == "  … and 3 more")
        #expect(ServedContent.syncLines(ServedContent.items(in: site.path("repos/main/.."), servedAt: base)).count == 2)
    }

    @Test(
        "breeze serve's sync command for signed content pins its keys, and names the identity when the URL implies another; the command syncs as printed"
    )
    func servedSignedContent() async throws {
        let work = try TemporaryFolder("served-signed")
        let bundle = work.path("site/App.freshair").path
        #expect(try await BreezeBinary.run(["init", bundle]).status == 0)
        #expect(try await BreezeBinary.run(["keygen", work.path("k.key").path]).status == 0)
        let released = try await BreezeBinary.run([
            "release", bundle, work.path("out").path, "--key", work.path("k.key").path,
        ])
        #expect(released.status == 0, "\(released.error)")
        let key = try #require(
            try JSONReader.parse(Array(Data(contentsOf: work.path("out/manifest.json"))))["signatures"]?.array?.first?[
                "key"
            ]?.string
        )
        try await PublishedFolder.with(.nginx) { server in
            try FileManager.default.removeItem(at: server.root)
            try FileManager.default.copyItem(at: work.path("out"), to: server.root)
            // The released folder served as the root: a device at / would expect "/", not "out".
            let line = try #require(
                ServedContent.syncLines(ServedContent.items(in: server.root, servedAt: server.url)).last
            )
            #expect(
                line
                    == "  breeze sync \(server.url.absoluteString) DIR --trusted-key \(key) --identity out    (a bundle)"
            )
            var words = line.trimmingCharacters(in: .whitespaces).components(separatedBy: "    (")[0]
                .split(separator: " ").map(String.init)
            words[words.firstIndex(of: "DIR")!] = work.path("device").path
            let synced = try await BreezeBinary.run(Array(words.dropFirst()))
            #expect(synced.status == 0 && synced.output.contains("(release 1)"), "\(synced.error)")
        }
    }
}
