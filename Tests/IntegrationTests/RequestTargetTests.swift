import Foundation
import NIOHTTP1
import Testing

@testable import FreshAirAsyncHTTPClient

/// Where ``RequestTarget`` sends a URL's request, and the head it asks with.
@Suite("A request's target: host to connect to, Host field, origin and path, as the wire wants them")
struct RequestTargetTests {
    @Test(
        "URLs of each shape",
        arguments: [
            (
                "http://127.0.0.1:8080/a/b%20c.bin?x=1&y=%2F", "127.0.0.1", 8080, "127.0.0.1:8080",
                "http://127.0.0.1:8080", "/a/b%20c.bin?x=1&y=%2F"
            ),
            ("https://Example.COM/p", "Example.COM", 443, "Example.COM", "https://Example.COM", "/p"),
            ("HTTP://h:80/a;b?c#fragment", "h", 80, "h", "http://h", "/a;b?c"),
            ("http://h", "h", 80, "h", "http://h", "/"),
            ("http://h?q", "h", 80, "h", "http://h", "/?q"),
            ("http://[::1]:9000/x", "::1", 9000, "[::1]:9000", "http://[::1]:9000", "/x"),
            ("http://[fe80::1%25eth0]/x", "fe80::1%eth0", 80, "[fe80::1%25eth0]", "http://[fe80::1%25eth0]", "/x"),
            // The host goes on the wire in its ASCII form, never decoded to Unicode.
            (
                "https://xn--caf-dma.example/%C3%BC", "xn--caf-dma.example", 443, "xn--caf-dma.example",
                "https://xn--caf-dma.example", "/%C3%BC"
            ),
            ("http://user:secret@h:1/p", "h", 1, "h:1", "http://h:1", "/p"),
        ]
    )
    func shapes(_ url: String, host: String, port: Int, hostHeader: String, origin: String, target: String) throws {
        let parsed = try RequestTarget(try #require(URL(string: url)))
        #expect(parsed.host == host)
        #expect(parsed.port == port)
        #expect(parsed.hostHeader == hostHeader)
        #expect(parsed.origin == origin)
        #expect(parsed.pathAndQuery == target)
        #expect(parsed.head(adding: []).headers["Host"] == [hostHeader])
    }

    @Test("A relative URL is read against its base", arguments: ["d000/f 1.bin"])
    func relative(_ path: String) throws {
        let base = try #require(URL(string: "http://127.0.0.1:8080/small/"))
        let parsed = try RequestTarget(base.appendingPathComponent(path))
        #expect(parsed.pathAndQuery == "/small/d000/f%201.bin")
        #expect(try RequestTarget(try #require(URL(string: "../up?x", relativeTo: base))).pathAndQuery == "/up?x")
    }

    @Test("Not http(s), or no host: refused", arguments: ["ftp://h/x", "file:///tmp/x", "http:///x", "mailto:a@b"])
    func refused(_ url: String) throws {
        #expect(throws: (any Error).self) { try RequestTarget(try #require(URL(string: url))) }
    }
}
