package import Foundation

/// The one HTTP operation FreshAir needs: a GET whose response body is streamed.
///
/// FreshAir ships `URLSessionTransport` (the default: on Apple platforms always, on Linux with the
/// `LinuxURLSession` trait, else `NoDefaultTransport`) and
/// `LocalFileTransport` (for `file://` URLs); the `FreshAirAsyncHTTPClient` product adds
/// `AsyncHTTPClientTransport`, which the `breeze` tool uses. Anything else (a proxy, an app's
/// own networking stack) can conform. The response is only valid inside `handle`, which lets an
/// implementation release the connection as soon as the body has been read, or cancel it when
/// `handle` throws.
///
/// Redirects are the transport's to follow, by the rules of `HTTPRedirect`; the transports
/// here share `HTTPRedirect/following(_:send:handle:)` for that.
package protocol HTTPTransport: Sendable {
    /// Sends `request` and hands the response head and streaming body to `handle`.
    ///
    /// Throw `TransportError` for failures below HTTP (connection refused, reset,
    /// timeout); any HTTP status, including 4xx and 5xx, is a response, not an error.
    func get<Result: Sendable>(
        _ request: HTTPGetRequest,
        handle: (HTTPResponseHead, ResponseBody) async throws -> Result
    ) async throws -> Result

    /// Requests of small files (``HTTPGetRequest/isPipelinable``) the transport sends on one
    /// connection before the first is answered; 1 when it sends one at a time. A sync keeps
    /// this many times ``SyncConfiguration/concurrency`` small files in flight.
    var pipelineDepth: Int { get }

    /// A hint that requests to `url`'s origin are about to come: a transport may start
    /// connecting now, so that connecting overlaps what the caller does first (a sync reads its
    /// store), and the first request adopts the connection. Returns at once.
    func connectAhead(to url: URL)
}

extension HTTPTransport {
    /// One request at a time on a connection: URLSession's and AsyncHTTPClient's way.
    package var pipelineDepth: Int { 1 }

    /// Nothing ahead: URLSession and AsyncHTTPClient connect when the request goes out.
    package func connectAhead(to url: URL) {}
}

/// A GET request.
package struct HTTPGetRequest: Sendable {
    /// The URL requested.
    package var url: URL
    /// Extra headers, in order (`If-None-Match`, `Range`, an app's own `Authorization`…).
    package var headers: [(name: String, value: String)]
    /// The longest wait for the response head; the body is governed by the transport's
    /// idle timeout instead, so that large files are not cut off.
    package var timeout: Duration
    /// The body's size, when a manifest says it: a small answer may wait behind others on a
    /// pipelining transport's connection, a large or unknown one never does.
    package var expectedBodySize: Int64?

    /// A GET of `url` with `headers`, waiting at most `timeout` for the response head.
    package init(
        url: URL,
        headers: [(name: String, value: String)] = [],
        timeout: Duration = .seconds(30),
        expectedBodySize: Int64? = nil
    ) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.expectedBodySize = expectedBodySize
    }

    /// The largest body sent behind other requests on a connection (``isPipelinable``). With 8
    /// requests ahead, a connection's answers received and not yet read stay under 256 KB.
    package static let pipelinableBodySize: Int64 = 32 << 10

    /// Whether the answer is known to be small enough to wait behind others on a connection.
    package var isPipelinable: Bool { Self.isPipelinable(bodySize: expectedBodySize) }

    /// Whether a body of `bodySize` (`nil`: unknown) may wait behind others on a connection.
    package static func isPipelinable(bodySize: Int64?) -> Bool {
        bodySize.map { $0 <= pipelinableBodySize } ?? false
    }
}

/// Status and headers of a response.
package struct HTTPResponseHead: Sendable {
    /// The HTTP status code.
    package var status: Int
    /// Headers as received; look them up with ``subscript(_:)``, which ignores case.
    package var headers: [(name: String, value: String)]

    /// A response head as received.
    package init(status: Int, headers: [(name: String, value: String)]) {
        self.status = status
        self.headers = headers
    }

    /// The first value of a header, matched without regard to case.
    package subscript(_ name: String) -> String? {
        headers.first { Self.namesMatch($0.name, name) }?.value
    }

    /// Header names are ASCII: compare them byte by byte, folding case (Foundation's
    /// locale-aware comparison cost several percent of a many-file sync). Lengths first: a
    /// lookup passes every other header of the response, and most differ in length.
    static func namesMatch(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var left = a.utf8.makeIterator()
        var right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case (let x?, let y?)
            where x == y
                || (x | 0x20 == y | 0x20 && (x | 0x20) >= UInt8(ascii: "a") && (x | 0x20) <= UInt8(ascii: "z")):
                continue
            default: return false
            }
        }
    }

    /// `Content-Length`, when present and valid.
    package var contentLength: Int64? { self["Content-Length"].flatMap { Int64($0) } }
}
