package import AsyncHTTPClient
package import Foundation
public import FreshAir
import NIOCore
import NIOHTTP1
import NIOPosix
public import NIOSSL
import Tracing

/// `HTTPTransport` over AsyncHTTPClient and SwiftNIO: keep-alive connection pooling,
/// streaming bodies with back-pressure, on Linux and Apple platforms. It speaks HTTP/1.1 only,
/// also to servers that offer HTTP/2, which costs more CPU than it saves here.
///
/// The `breeze` tool and servers use it; an app on an Apple platform needs nothing beyond
/// `FreshAir`'s `URLSessionTransport`. The transport owns a connection pool: call
/// ``shutdown()`` when done, or use ``withTransport(connectionsPerHost:connectTimeout:idleTimeout:tlsConfiguration:_:)``,
/// which does.
public final class AsyncHTTPClientTransport: HTTPTransport {
    private let client: HTTPClient
    private let idleTimeout: TimeAmount

    /// Runs `body` with a new transport and shuts it down afterwards, whether `body` returns or throws.
    ///
    /// The parameters are ``init(connectionsPerHost:connectTimeout:idleTimeout:tlsConfiguration:)``'s.
    public static func withTransport<Result>(
        connectionsPerHost: Int = 8,
        connectTimeout: Duration = .seconds(10),
        idleTimeout: Duration = .seconds(30),
        tlsConfiguration: TLSConfiguration? = nil,
        _ body: (AsyncHTTPClientTransport) async throws -> Result
    ) async throws -> Result {
        let transport = AsyncHTTPClientTransport(
            connectionsPerHost: connectionsPerHost,
            connectTimeout: connectTimeout,
            idleTimeout: idleTimeout,
            tlsConfiguration: tlsConfiguration
        )
        return try await withShutdown(transport, shutdown: { try await $0.shutdown() }, body)
    }

    /// Creates a transport with its own connection pool.
    ///
    /// - Parameters:
    ///   - connectionsPerHost: how many connections may be open to one host; match it to
    ///     the download concurrency.
    ///   - idleTimeout: the longest silence tolerated while a body streams: a wait for the
    ///     server's next bytes that lasts this long fails with a ``TransportError/Kind/timeout``.
    ///     Time the reader takes between chunks does not count. The wait for the response head
    ///     is bounded by the request's own timeout.
    ///   - tlsConfiguration: how `https` servers are verified; `nil`: the system's trust
    ///     roots and full certificate checks. Pass one to pin a private CA (a staging server,
    ///     a company network), never to switch verification off for production content.
    public init(
        connectionsPerHost: Int = 8,
        connectTimeout: Duration = .seconds(10),
        idleTimeout: Duration = .seconds(30),
        tlsConfiguration: TLSConfiguration? = nil
    ) {
        var configuration = Self.configuration(
            connectionsPerHost: connectionsPerHost,
            connectTimeout: connectTimeout,
            idleTimeout: idleTimeout
        )
        if let tlsConfiguration { configuration.tlsConfiguration = tlsConfiguration }
        // AsyncHTTPClient's read timer counts on while a slow reader holds the body back, so
        // bodies keep a timer of their own (``IdleWatchedBody``). The head's wait is bounded by
        // each request's timeout.
        configuration.timeout.read = nil
        self.idleTimeout = TimeAmount(idleTimeout)
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// FreshAir's client settings, which breeze's S3 client shares: connections per host, fail
    /// a refused connection now (the caller's retry policy decides), no decompression, no
    /// redirects, no tracing spans when the app set up no tracer.
    package static func configuration(
        connectionsPerHost: Int,
        connectTimeout: Duration,
        idleTimeout: Duration
    ) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(
            timeout: .init(connect: TimeAmount(connectTimeout), read: TimeAmount(idleTimeout))
        )
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60),
            concurrentHTTP1ConnectionsPerHostSoftLimit: connectionsPerHost
        )
        // A refused connection should fail now and go through RetryPolicy, which the caller
        // configures, not be retried silently until the connect timeout.
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.decompression = .disabled  // Hashes are of the bytes as published.
        // HTTP/1.1 even where a server offers HTTP/2: through AsyncHTTPClient every HTTP/2 frame
        // crosses a stream channel's pipeline, which costs more than it gives (docs/BENCHMARKS.md);
        // connections per host give the concurrency h2's streams would.
        configuration.httpVersion = .http1Only
        // Redirects are followed here, by ``HTTPRedirect``'s rules (never from https to http).
        configuration.redirectConfiguration = .disallow
        // AsyncHTTPClient makes a span for every request through the process's tracer; when the
        // app bootstrapped none (the no-op tracer), skipping it saves ~4% of a many-file sync.
        if InstrumentationSystem.tracer is NoOpTracer { configuration.tracing.tracer = nil }
        return configuration
    }

    /// Closes every connection. Call once, when the transport is no longer needed.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    package func get<Result: Sendable>(
        _ request: HTTPGetRequest,
        handle: (FreshAir.HTTPResponseHead, ResponseBody) async throws -> Result
    ) async throws -> Result {
        try await HTTPRedirect.following(request, send: send, handle: handle)
    }

    /// One GET, redirects not followed.
    private func send(_ request: HTTPGetRequest) async throws -> (FreshAir.HTTPResponseHead, ResponseBody) {
        let url = request.url
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = .GET
        for header in request.headers { outgoing.headers.add(name: header.name, value: header.value) }
        let response: HTTPClientResponse
        do {
            response = try await client.execute(outgoing, timeout: TimeAmount(request.timeout))
        } catch {
            throw Self.translate(error, url: url)
        }
        let head = FreshAir.HTTPResponseHead(
            status: Int(response.status.code),
            headers: response.headers.map { ($0.name, $0.value) }
        )
        let body = IdleWatchedBody.reading(
            response.body,
            idleTimeout: idleTimeout,
            on: client.eventLoopGroup.any(),
            url: url
        ) { Self.translate($0, url: url) }
        return (head, body)
    }

    /// Names AsyncHTTPClient's and NIO's errors in the terms of ``TransportError``, with a
    /// reason a person can act on ("connection refused"), not a type name; the original error
    /// is kept as ``TransportError/underlying``.
    package static func translate(_ error: any Error, url: URL) -> any Error {
        TransportError.keeping(error, in: classify(error, url: url))
    }

    private static func classify(_ error: any Error, url: URL) -> any Error {
        if error is CancellationError { return error }
        if let clientError = error as? HTTPClientError {
            switch clientError {
            case .connectTimeout:
                return TransportError(kind: .timeout, url: url, detail: "no connection within the connect timeout")
            case .readTimeout:
                return TransportError.serverSilent(url)
            case .deadlineExceeded:
                return TransportError(kind: .timeout, url: url, detail: "no response within the request timeout")
            case .remoteConnectionClosed:
                return TransportError.serverClosed(url)
            case .cancelled:
                return CancellationError()
            default:
                break
            }
        }
        if let connection = error as? NIOConnectionError {
            let cause =
                connection.connectionErrors.first.map { reason($0.error) }
                ?? (connection.dnsAError ?? connection.dnsAAAAError).map {
                    "the host name did not resolve (\(reason($0)))"
                }
                ?? "no address to connect to"
            return TransportError(kind: .connect, url: url, detail: cause)
        }
        if let io = error as? IOError {
            switch io.errnoCode {
            case ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL:
                return TransportError(kind: .connect, url: url, detail: reason(io))
            case ECONNRESET, EPIPE:
                return TransportError(kind: .interrupted, url: url, detail: reason(io))
            default:
                return TransportError(kind: .other, url: url, detail: reason(io))
            }
        }
        if error is HTTPParserError {
            return TransportError(
                kind: .interrupted,
                url: url,
                detail: "the server's response was not valid HTTP (\(words(error)))"
            )
        }
        if error is ChannelError {
            return TransportError(kind: .interrupted, url: url, detail: "the connection closed unexpectedly")
        }
        if let tls = error as? NIOSSLError {
            switch tls {
            case .uncleanShutdown:
                return TransportError(
                    kind: .interrupted,
                    url: url,
                    detail: "the TLS connection closed without its closing message"
                )
            case .handshakeFailed:
                return TransportError(kind: .tls, url: url, detail: "the TLS handshake failed (\(tlsReasons(tls)))")
            default:
                return TransportError(kind: .other, url: url, detail: "TLS failed (\(words(tls)))")
            }
        }
        if error is NIOSSLExtraError {  // EOF during the handshake, a name the certificate does not cover
            return TransportError(kind: .tls, url: url, detail: "TLS could not be set up (\(words(error)))")
        }
        if error is NIOSSLCloseTimedOutError {
            return TransportError(kind: .interrupted, url: url, detail: "the TLS connection did not close in time")
        }
        return TransportError(kind: .other, url: url, detail: words(error))
    }

    /// `strerror`'s words for a system error ("connection refused"), a name that did not
    /// resolve in words, else the error's own (see ``words(_:)``).
    static func reason(_ error: any Error) -> String {
        if error is SocketAddressError { return "no address is known for that name" }
        guard let io = error as? IOError else { return words(error) }
        return String(cString: strerror(io.errnoCode)).lowercased()
    }

    /// BoringSSL's reasons in a handshake failure, in words (`CERTIFICATE_VERIFY_FAILED`:
    /// "certificate verify failed: the server's certificate is not trusted here").
    static func tlsReasons(_ error: any Error) -> String {
        let text = String(describing: error)
        var reasons: [String] = []
        var rest = text[...]
        while let marker = rest.range(of: "OPENSSL_internal:") {
            let code = rest[marker.upperBound...].prefix { $0.isUppercase || $0.isNumber || $0 == "_" }
            let reason = code.lowercased().replacingOccurrences(of: "_", with: " ")
            if !reason.isEmpty, !reasons.contains(reason) { reasons.append(reason) }
            rest = rest[marker.upperBound...]
        }
        guard !reasons.isEmpty else { return words(error) }
        return reasons.joined(separator: ", ") + tlsHint(reasons)
    }

    /// What a handshake failure's reasons usually mean, for the two a user meets first.
    private static func tlsHint(_ reasons: [String]) -> String {
        if reasons.contains("certificate verify failed") { return ": the server's certificate is not trusted here" }
        // The first bytes back were not a TLS record: most often a server of plain HTTP, such as
        // a development server, asked for over https.
        if reasons.contains("wrong version number") {
            return ": the server did not answer in TLS; if it serves plain HTTP, use an http:// URL"
        }
        return ""
    }

    /// An error's description without what only its programmer can read: the type and case
    /// names before the first ": " (`NIOSSLExtraError.failedToValidateHostname: …`) and the
    /// source locations BoringSSL appends (` at /…/handshake.cc:1234`), which name the
    /// folder breeze was built in.
    static func words(_ error: any Error) -> String {
        var text = String(describing: error)
        if let colon = text.range(of: ": "),
            text[..<colon.lowerBound].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "_" }),
            text[..<colon.lowerBound].contains(".")
        {
            text = String(text[colon.upperBound...])
        }
        while let at = text.range(of: " at /") {
            let end =
                text[at.upperBound...].firstIndex { $0 == " " || $0 == "]" || $0 == ")" || $0 == "," } ?? text.endIndex
            text.removeSubrange(at.lowerBound..<end)
        }
        return text
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

extension Transport {
    /// Sends FreshAir's requests through `client`: pass it to a sync as its `transport`.
    public init(_ client: AsyncHTTPClientTransport) {
        self.init(client as any HTTPTransport)
    }
}

/// A body chunk read where SwiftNIO received it: no copy into an array, and no allocation for
/// one, per chunk.
struct ByteBufferBytes: BodyBytes {
    let buffer: ByteBuffer
    var count: Int { buffer.readableBytes }

    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try buffer.withUnsafeReadableBytes(body)
    }
}
