package import Foundation
public import FreshAir
import NIOCore
import NIOHTTP1
import NIOPosix
public import NIOSSL
import Synchronization

/// `HTTPTransport` over SwiftNIO that sends several GETs on a connection before the first is
/// answered (HTTP/1.1 pipelining): the round trip of one small file no longer waits for the
/// last, which is most of the time a sync of many small files spends on requests.
///
/// Answers on a connection come in order, so one slow answer holds up those behind it; a
/// connection that closes with requests unanswered has them sent again on another (GETs are
/// safe to repeat): at most ``resendLimit`` times on connections that answered nothing. It speaks HTTP/1.1 only, plain or over TLS.
/// Call ``shutdown()`` when done.
public final class PipeliningTransport: HTTPTransport {
    /// How often one request is sent on connections that closed answering nothing.
    static let resendLimit = 4

    private let pool: PipelinedConnectionPool
    private let connectTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private let tlsConfiguration: TLSConfiguration
    /// Made for the first https connection: loading the system's trust roots costs some 4 MB,
    /// which a sync over plain http should not pay.
    private let tlsContext = Mutex<Result<NIOSSLContext, any Error>?>(nil)
    /// How much a read may bring, shared by the connections.
    let readSizing = ReadSizing()

    /// The event loops every pipelining connection runs on: half the cores, at least one, made
    /// when the first connection opens and kept for the life of the process, as NIO's singleton
    /// group is. That one has a loop per core; the other half of the cores is left to what the
    /// bodies become, files created, written and hashed on the tasks' and `BlockingPool`'s
    /// threads. On 2 cores one loop instead of two: fewer thread switches (2,700 against 4,000
    /// in a sync of 10,000 small files), less CPU, and no case slower.
    static let loops = MultiThreadedEventLoopGroup(numberOfThreads: max(1, System.coreCount / 2))

    /// Runs `body` with a new transport and shuts it down afterwards, whether `body` returns or throws.
    ///
    /// The parameters are ``init(connectionsPerHost:depth:connectTimeout:idleTimeout:tlsConfiguration:)``'s.
    public static func withTransport<Result>(
        connectionsPerHost: Int = 8,
        depth: Int = 8,
        connectTimeout: Duration = .seconds(10),
        idleTimeout: Duration = .seconds(30),
        tlsConfiguration: TLSConfiguration? = nil,
        _ body: (PipeliningTransport) async throws -> Result
    ) async throws -> Result {
        let transport = PipeliningTransport(
            connectionsPerHost: connectionsPerHost,
            depth: depth,
            connectTimeout: connectTimeout,
            idleTimeout: idleTimeout,
            tlsConfiguration: tlsConfiguration
        )
        return try await withShutdown(transport, shutdown: { await $0.shutdown() }, body)
    }

    /// Creates a transport with its own connections.
    ///
    /// - Parameters:
    ///   - connectionsPerHost: connections open to one origin at most.
    ///   - depth: requests sent on one connection and not yet answered, at most; 1 turns
    ///     pipelining off.
    ///   - idleTimeout: the longest silence tolerated while a body streams.
    ///   - tlsConfiguration: how `https` servers are verified; `nil`: the system's trust roots.
    public init(
        connectionsPerHost: Int = 8,
        depth: Int = 8,
        connectTimeout: Duration = .seconds(10),
        idleTimeout: Duration = .seconds(30),
        tlsConfiguration: TLSConfiguration? = nil
    ) {
        pool = PipelinedConnectionPool(connectionsPerHost: connectionsPerHost, depth: depth)
        self.connectTimeout = TimeAmount(connectTimeout)
        self.idleTimeout = TimeAmount(idleTimeout)
        var configuration = tlsConfiguration ?? .makeClientConfiguration()
        configuration.applicationProtocols = ["http/1.1"]
        self.tlsConfiguration = configuration
    }

    /// The TLS context, made once.
    private func tls() throws -> NIOSSLContext {
        try tlsContext.withLock { context in
            if context == nil { context = Result { try NIOSSLContext(configuration: tlsConfiguration) } }
            return try context!.get()
        }
    }

    /// Requests of small files sent on a connection before the first is answered.
    package var pipelineDepth: Int { pool.depth }

    /// Opens a connection to `url`'s origin now, when there is none: the first request adopts
    /// it. A no-change check connects while it reads its store (measured in docs/BENCHMARKS.md).
    package func connectAhead(to url: URL) {
        guard let target = try? RequestTarget(url) else { return }
        pool.openAhead(to: target.origin) { id in try await self.connect(to: target, id: id) }
    }

    /// Closes every connection. Call once, when the transport is no longer needed.
    public func shutdown() async {
        await pool.shutDown()
    }

    package func get<Result: Sendable>(
        _ request: HTTPGetRequest,
        handle: (FreshAir.HTTPResponseHead, ResponseBody) async throws -> Result
    ) async throws -> Result {
        // A small answer comes in a read shared with others: only large ones count for the size of reads.
        if request.isPipelinable { return try await exchange(request, handle: handle) }
        return try await readSizing.streaming { try await exchange(request, handle: handle) }
    }

    /// `get`'s request and redirects, its exchanges finished when it returns.
    private func exchange<Result: Sendable>(
        _ request: HTTPGetRequest,
        handle: (FreshAir.HTTPResponseHead, ResponseBody) async throws -> Result
    ) async throws -> Result {
        let opened = OpenedExchanges()
        do {
            let result = try await HTTPRedirect.following(
                request,
                send: { try await send($0, recordingIn: opened) },
                handle: handle
            )
            opened.finish()
            return result
        } catch {
            opened.finish()
            throw error
        }
    }

    /// One GET, redirects not followed; sent again on another connection if the one it went
    /// out on closed before answering.
    private func send(
        _ request: HTTPGetRequest,
        recordingIn opened: OpenedExchanges
    ) async throws -> (FreshAir.HTTPResponseHead, ResponseBody) {
        let url = request.url
        let target = try RequestTarget(url)
        let head = target.head(adding: request.headers)
        // Sends on connections that closed having answered nothing count against the limit;
        // those cut off behind others' answers (a server that closes after so many requests),
        // and requests never written (their connection closed idle before their turn), only
        // against a far larger one.
        var unanswered = 0
        var sends = 0
        var notSent = 0
        while unanswered < Self.resendLimit, sends < Self.resendLimit * 16 {
            sends += 1
            try Task.checkCancellation()
            let connection: PipelinedConnection
            do {
                connection = try await pool.connection(to: target.origin, small: request.isPipelinable) { id in
                    try await connect(to: target, id: id)
                }
            } catch {
                throw AsyncHTTPClientTransport.translate(error, url: url)
            }
            // A small answer is read once it is all in: one wake of this task instead of two.
            let exchange = connection.exchange(
                wholeUpTo: request.isPipelinable ? Int(HTTPGetRequest.pipelinableBodySize) : 0
            )
            opened.append(exchange, on: connection)
            connection.send(head, for: exchange, timeout: TimeAmount(request.timeout))
            do {
                let responseHead = try await exchange.head()
                let body = ResponseBody {
                    do {
                        return try await exchange.nextChunk().map(ByteBufferBytes.init)
                    } catch {
                        throw Self.named(error, url: url)
                    }
                }
                return (responseHead, body)
            } catch PipelinedExchange.Failure.unanswered(let afterAnswers) {
                if !afterAnswers { unanswered += 1 }
            } catch PipelinedExchange.Failure.notSent {
                notSent += 1
            } catch {
                throw Self.named(error, url: url)
            }
        }
        throw TransportError(
            kind: .interrupted,
            url: url,
            detail: notSent == sends
                ? "every connection closed before the request could be sent, \(sends) times"
                : "the server closed the connection before answering, \(sends - notSent) times"
        )
    }

    /// An exchange's failure in ``TransportError``'s terms, naming the URL it was for.
    private static func named(_ error: any Error, url: URL) -> any Error {
        var error = error
        if case PipelinedExchange.Failure.failed(let cause) = error { error = cause }
        if case PipelinedExchange.Failure.unanswered(_) = error {
            return TransportError.serverClosed(url)
        }
        if var transportError = error as? TransportError {
            transportError.url = url
            return transportError
        }
        return AsyncHTTPClientTransport.translate(error, url: url)
    }

    private func connect(to target: RequestTarget, id: Int) async throws -> PipelinedConnection {
        let (tls, idleTimeout, pool) = (target.isTLS ? try tls() : nil, idleTimeout, pool)
        let readAllocator = SharedReadAllocator(sizing: readSizing)
        let url = target.url
        let held = HeldBytes(depth: pool.depth, sizing: readSizing)
        let bootstrap = ClientBootstrap(group: Self.loops)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelOption(.autoRead, value: false)
            .channelOption(.recvAllocator, value: readAllocator)
            // One read between two looks at what the callers hold (NIO's default is up to 4):
            // a connection stops within one read of its high-water mark.
            .channelOption(.maxMessagesPerRead, value: 1)
        let initialize:
            @Sendable (any Channel) -> EventLoopFuture<
                (any Channel, NIOLoopBound<PipelineHandler>, EventLoopFuture<Void>)
            > = { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls {
                        let hostname = target.host.isIPAddress ? nil : target.host
                        try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: hostname))
                    }
                    try pipeline.addHTTPClientHandlers(leftOverBytesStrategy: .fireError)
                    try pipeline.addHandler(IdleStateHandler(readTimeout: idleTimeout))
                    let ready = channel.eventLoop.makePromise(of: Void.self)
                    let handler = PipelineHandler(
                        url: url,
                        held: held,
                        idleTimeout: idleTimeout,
                        ready: ready,
                        waitsForTLS: tls != nil,
                        events: .init(
                            answered: { pool.answered(id, origin: target.origin) },
                            retired: { pool.retired(id, origin: target.origin, afterOneAnswer: $0) }
                        )
                    )
                    try pipeline.addHandler(handler)
                    return (channel, NIOLoopBound(handler, eventLoop: channel.eventLoop), ready.futureResult)
                }
            }
        // An IP address is connected to as it is: `connect(host:)` would still ask the resolver,
        // on a thread of its own, and race IPv4 against IPv6 (Happy Eyeballs) for it.
        let (channel, handler, ready) =
            if let address = try? SocketAddress(ipAddress: target.host, port: target.port) {
                try await bootstrap.connect(to: address, channelInitializer: initialize)
            } else {
                try await bootstrap.connect(host: target.host, port: target.port, channelInitializer: initialize)
            }
        // Open means ready for requests: over TLS, once the handshake is done, so that a
        // certificate refused is a failure to connect, in its own words.
        do {
            try await ready.get()
        } catch {
            channel.close(promise: nil)
            throw error
        }
        return PipelinedConnection(id: id, channel: channel, handler: handler, held: held)
    }
}

extension Transport {
    /// Sends FreshAir's requests through `client`, pipelined: pass it to a sync as its `transport`.
    public init(_ client: PipeliningTransport) {
        self.init(client as any HTTPTransport)
    }
}

/// The exchanges one `get` opened (one per redirect), finished when it returns: a response not
/// read to its end closes its connection.
private final class OpenedExchanges: Sendable {
    private let exchanges = Mutex<[(PipelinedExchange, PipelinedConnection)]>([])

    func append(_ exchange: PipelinedExchange, on connection: PipelinedConnection) {
        exchanges.withLock { $0.append((exchange, connection)) }
    }

    func finish() {
        for (exchange, connection) in exchanges.withLock({ $0 }) where !exchange.abandon() {
            connection.abandon(exchange)
        }
    }
}

/// Where a URL's request goes and the head that asks for it.
struct RequestTarget: Sendable {
    let url: URL
    let isTLS: Bool
    /// The host to connect to: a name in ASCII, or an IP address.
    let host: String
    let port: Int
    /// Scheme, host and port: connections are shared by requests with the same.
    let origin: String
    /// The request's target, percent-encoded as the URL has it.
    let pathAndQuery: String
    /// The `Host` field: the host as the URL has it (IPv6 in brackets), and a port not the scheme's.
    let hostHeader: String

    /// Read from the URL's own parse, not from a `URLComponents` made for each request: that
    /// parsed the URL again (about 2% of a sync of 10,000 small files), and gave a host in
    /// Unicode (`café.example`) where the wire takes its ASCII form (`xn--caf-dma.example`).
    init(_ url: URL) throws {
        let url = url.absoluteURL
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let encodedHost = url.host(percentEncoded: true), !encodedHost.isEmpty
        else {
            throw TransportError(kind: .other, url: url, detail: "not an http(s) URL with a host")
        }
        self.url = url
        isTLS = scheme == "https"
        let defaultPort = isTLS ? 443 : 80
        port = url.port ?? defaultPort
        // An IPv6 literal comes without its brackets; its zone (`%25eth0`) is connected to decoded.
        // Bytes, not `contains(":")`: that one is Foundation's string search, half of what
        // this init cost (87 M instructions in a sync of 10,000 small files, now 46 M).
        let isIPv6 = encodedHost.utf8.contains(UInt8(ascii: ":"))
        host = isIPv6 ? encodedHost.removingPercentEncoding ?? encodedHost : encodedHost
        let bracketed = isIPv6 ? "[\(encodedHost)]" : encodedHost
        hostHeader = port == defaultPort ? bracketed : "\(bracketed):\(port)"
        origin = "\(scheme)://\(hostHeader)"
        let encodedPath = url.path(percentEncoded: true)
        let path = encodedPath.isEmpty ? "/" : encodedPath
        pathAndQuery = url.query(percentEncoded: true).map { "\(path)?\($0)" } ?? path
    }

    func head(adding headers: [(name: String, value: String)]) -> HTTPRequestHead {
        var fields = HTTPHeaders()
        fields.reserveCapacity(headers.count + 1)
        fields.add(name: "Host", value: hostHeader)
        for header in headers { fields.add(name: header.name, value: header.value) }
        return HTTPRequestHead(version: .http1_1, method: .GET, uri: pathAndQuery, headers: fields)
    }
}

extension String {
    fileprivate var isIPAddress: Bool {
        (try? SocketAddress(ipAddress: self, port: 0)) != nil
    }
}
