package import Foundation
import Hummingbird
import Logging
import NIOCore

// With Hummingbird's imports, Linux's Swift finds `struct stat` through Dispatch's C module
// first, and member import visibility then asks for that module by name.
#if canImport(CDispatch)
import CDispatch
#endif

/// A development web server for a folder: what `breeze serve` and `breeze demo` run.
///
/// Answers like the static hosting FreshAir is made for: `ETag` and `Last-Modified` on
/// every file, `304 Not Modified` for `If-None-Match`/`If-Modified-Since`, and
/// `206 Partial Content` for `Range` (honouring `If-Range`). Binds 127.0.0.1 unless told
/// otherwise.
///
/// A request whose decoded path holds NUL or another control byte is refused (`400`): a C
/// file call would cut the path at the NUL and serve another file. A symbolic link inside the
/// folder that resolves outside it is not followed (`404`) unless ``followsLinksOutside``.
package struct StaticFileServer: Sendable {
    /// One request as the server answered it.
    package struct Exchange: Sendable, Hashable {
        package var method: String
        package var path: String
        package var status: Int
    }

    package let root: URL
    package let host: String
    package let port: Int
    /// Serve files that links inside the folder point to outside it (off by default).
    package var followsLinksOutside: Bool
    /// The `Cache-Control` of every file, as `breeze publish` stores it on S3.
    package var cachePolicy: CachePolicy
    /// A connection with no request under way for this long is closed: silent clients cannot
    /// hold the server's descriptors for ever.
    package var idleTimeout: Duration = .seconds(5)
    /// Connections open at once; past it, new ones wait in the listen backlog until one closes,
    /// rather than the server running out of descriptors (and spinning on `accept` when it
    /// does). Defaults to the process's descriptor limit less a margin for files being served.
    package var maxConnections = StaticFileServer.connectionsTheDescriptorLimitAllows()

    /// The descriptor limit (`RLIMIT_NOFILE`) less 32 for the files served and the listener,
    /// half of it for each connection's file, at least 4 and at most 4,096.
    package static func connectionsTheDescriptorLimitAllows() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 512 }
        let available = Int(clamping: limit.rlim_cur) - 32
        return min(4_096, max(4, available / 2))
    }

    /// - Parameter port: `0` picks a free port; ``RunningServer/url`` tells which.
    package init(
        root: URL,
        host: String = "127.0.0.1",
        port: Int = 0,
        followsLinksOutside: Bool = false,
        cachePolicy: CachePolicy = CachePolicy()
    ) {
        self.root = root
        self.host = host
        self.port = port
        self.followsLinksOutside = followsLinksOutside
        self.cachePolicy = cachePolicy
    }

    /// Starts serving in the background and returns once the server listens.
    ///
    /// - Parameter onRequest: told of every request after it is answered.
    package func start(onRequest: @escaping @Sendable (Exchange) -> Void = { _ in }) async throws -> RunningServer {
        let (addresses, addressContinuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "breeze.serve")
        logger.logLevel = .critical  // Shutdown reports cancellation at .error: not news.
        let router = Router()
        router.middlewares.add(ExchangeRecorder(onRequest: onRequest))
        router.middlewares.add(CacheHeaders(policy: cachePolicy))
        let servedRoot = try ServedPathGuard<BasicRequestContext>.resolve(root.path)
        // The guard first: nothing about a file it refuses (not even its size, in a 416) leaks.
        router.middlewares.add(ServedPathGuard(root: servedRoot, followsLinksOutside: followsLinksOutside))
        router.middlewares.add(RangeRequests(root: servedRoot))
        router.middlewares.add(FileMiddleware(root.path, searchForIndexHtml: true, logger: logger))
        let app = Application(
            router: router,
            server: .http1(
                configuration: .init(idleTimeout: .nanoseconds(Int64(idleTimeout.components.seconds) * 1_000_000_000))
            ),
            configuration: .init(
                address: .hostname(host, port: port),
                serverName: "breeze",
                availableConnectionsDelegate: .maximum(maxConnections, logger: logger)
            ),
            onServerRunning: { channel in
                addressContinuation.yield(channel.localAddress?.port ?? 0)
                addressContinuation.finish()
            },
            logger: logger
        )
        let task = Task {
            // However it ends, the wait below for the bound port ends with it.
            defer { addressContinuation.finish() }
            try await app.run()
        }
        var iterator = addresses.makeAsyncIterator()
        guard let boundPort = await iterator.next() else {
            // The server stopped before it listened: its error says why (a port in use, say).
            do { try await task.value } catch { throw Self.listenFailure(error, host: host, port: port) }
            throw PublishError("could not listen on \(host):\(port)", kind: .configuration)
        }
        let urlHost = host.contains(":") ? "[\(host)]" : host
        return RunningServer(url: URL(string: "http://\(urlHost):\(boundPort)/")!, task: task)
    }
}

extension StaticFileServer {
    /// Why the server could not listen, in words: the address in use, not permitted, not this machine's.
    static func listenFailure(_ error: any Error, host: String, port: Int) -> PublishError {
        let reason: String
        switch (error as? IOError)?.errnoCode {
        case EADDRINUSE?:
            reason = "the port is in use (another server is running there?); pick another with --port, or --port 0"
        case EACCES?: reason = "binding a port below 1024 needs privileges; pick a port above 1023 with --port"
        case EADDRNOTAVAIL?: reason = "\(host) is not an address of this machine; keep --host 127.0.0.1"
        default:
            let description = (error as? IOError).map { String(cString: strerror($0.errnoCode)) } ?? "\(error)"
            reason = description
        }
        return PublishError("could not listen on \(host):\(port): \(reason)", kind: .configuration)
    }
}

/// A server started by ``StaticFileServer/start(onRequest:)``.
package struct RunningServer: Sendable {
    /// The root URL, ending in `/`.
    package let url: URL
    let task: Task<Void, any Error>

    /// Blocks until the server stops (it stops when the calling task is cancelled).
    package func wait() async throws {
        try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Stops accepting requests and waits for the server to close.
    package func stop() async {
        task.cancel()
        _ = try? await task.value
    }
}

/// Reports each request after the file middleware has answered it.
private struct ExchangeRecorder<Context: RequestContext>: RouterMiddleware {
    let onRequest: @Sendable (StaticFileServer.Exchange) -> Void

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            let response = try await next(request, context)
            onRequest(.init(method: request.method.rawValue, path: request.uri.path, status: Int(response.status.code)))
            return response
        } catch let error as any HTTPResponseError {
            onRequest(.init(method: request.method.rawValue, path: request.uri.path, status: Int(error.status.code)))
            throw error
        }
    }
}

/// Adds the policy's `Cache-Control` to every file answered (`200`, `206`, `304`).
private struct CacheHeaders<Context: RequestContext>: RouterMiddleware {
    let policy: CachePolicy

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response = try await next(request, context)
        if [200, 206, 304].contains(response.status.code) {
            response.headers[.cacheControl] = policy.cacheControl(for: request.uri.path)
        }
        return response
    }
}

/// Range requests as static hosting answers them (RFC 9110, resolved by ``ByteRange``): a suffix
/// range gets the file's last bytes, a range past the end `416` with `Content-Range: bytes
/// */size`, a request for several ranges the whole file (`200`), never the first range alone
/// as if it were all that was asked. The `ETag` (modification time and size, as nginx's) is
/// sent strong, so `If-Range` may use it, and an `If-Range` with a weak one never matches
/// (RFC 9110, 13.1.5).
private struct RangeRequests<Context: RequestContext>: RouterMiddleware {
    /// The served folder, links resolved: where the file a range is of is looked up.
    let root: String

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var head = request.head
        if let range = head.headerFields[.range] {
            switch fileSize(request).map({ ByteRange.resolve(range, size: $0) }) ?? .whole {
            case .part(let bytes) where head.headerFields[.ifRange]?.hasPrefix("W/") != true:
                // Given back to the file middleware in the one form it reads right.
                head.headerFields[.range] = "bytes=\(bytes.lowerBound)-\(bytes.upperBound)"
            case .unsatisfiable where head.headerFields[.ifRange] == nil:
                var headers = HTTPFields()
                headers[.contentRange] = "bytes */\(fileSize(request) ?? 0)"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            default:
                // The whole file: no usable range, or an If-Range that may not hold.
                head.headerFields[.range] = nil
                head.headerFields[.ifRange] = nil
            }
        }
        // The file middleware makes its tags weak and compares them as text: give it back its own form.
        if let tag = head.headerFields[.ifNoneMatch], tag.hasPrefix("\"") {
            head.headerFields[.ifNoneMatch] = "W/" + tag
        }
        if let tag = head.headerFields[.ifRange], tag.hasPrefix("\"") { head.headerFields[.ifRange] = "W/" + tag }
        var response = try await next(Request(head: head, body: request.body), context)
        if let tag = response.headers[.eTag], tag.hasPrefix("W/") { response.headers[.eTag] = String(tag.dropFirst(2)) }
        return response
    }

    /// The size of the regular file the request names (a folder's `index.html` for a folder);
    /// `nil` when there is none, and the file middleware answers as it would without a range.
    private func fileSize(_ request: Request) -> Int64? {
        guard let decoded = request.uri.path.removingPercentEncoding else { return nil }
        for candidate in [root + decoded, root + decoded + (decoded.hasSuffix("/") ? "" : "/") + "index.html"] {
            var info = stat()
            if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG { return Int64(info.st_size) }
        }
        return nil
    }
}

/// Refuses what a static folder must never answer: control bytes in the decoded path, and
/// (unless allowed) a file reached through a link that leaves the folder.
private struct ServedPathGuard<Context: RequestContext>: RouterMiddleware {
    /// The served folder, every link in its own path resolved.
    let root: String
    let followsLinksOutside: Bool

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let decoded = request.uri.path.removingPercentEncoding else {
            throw HTTPError(.badRequest, message: "The path is not valid percent-encoded UTF-8.")
        }
        if decoded.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw HTTPError(.badRequest, message: "Control characters (NUL among them) are not allowed in a path.")
        }
        if !followsLinksOutside {
            let target = root + decoded
            // What the file middleware would open: the file, or a folder's index.html.
            for candidate in [target, target.hasSuffix("/") ? target + "index.html" : target + "/index.html"] {
                if let resolved = try? Self.resolve(candidate), resolved != root, !resolved.hasPrefix(root + "/") {
                    throw HTTPError(.notFound)
                }
            }
        }
        return try await next(request, context)
    }

    /// The path with every link resolved (`realpath(3)`); throws when nothing is there.
    static func resolve(_ path: String) throws -> String {
        guard let resolved = realpath(path, nil) else { throw CocoaError(.fileNoSuchFile) }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
