import Foundation
import Hummingbird
import Logging
import NIOCore

/// A development web server for a folder: what `breeze serve` and `breeze demo` run.
///
/// Answers like the static hosting FreshAir is made for: `ETag` and `Last-Modified` on
/// every file, `304 Not Modified` for `If-None-Match`/`If-Modified-Since`, and
/// `206 Partial Content` for `Range` (honouring `If-Range`). Binds 127.0.0.1 unless told
/// otherwise.
public struct StaticFileServer: Sendable {
    /// One request as the server answered it.
    public struct Exchange: Sendable, Hashable {
        public var method: String
        public var path: String
        public var status: Int
    }

    public let root: URL
    public let host: String
    public let port: Int

    /// - Parameter port: `0` picks a free port; ``RunningServer/url`` tells which.
    public init(root: URL, host: String = "127.0.0.1", port: Int = 0) {
        self.root = root
        self.host = host
        self.port = port
    }

    /// Starts serving in the background and returns once the server listens.
    ///
    /// - Parameter onRequest: told of every request after it is answered.
    public func start(onRequest: @escaping @Sendable (Exchange) -> Void = { _ in }) async throws -> RunningServer {
        let (addresses, addressContinuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "breeze.serve")
        logger.logLevel = .critical  // Shutdown reports cancellation at .error: not news.
        let router = Router()
        router.middlewares.add(ExchangeRecorder(onRequest: onRequest))
        router.middlewares.add(FileMiddleware(root.path, searchForIndexHtml: true, logger: logger))
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "breeze"),
            onServerRunning: { channel in
                addressContinuation.yield(channel.localAddress?.port ?? 0)
                addressContinuation.finish()
            },
            logger: logger)
        let task = Task { try await app.run() }
        var iterator = addresses.makeAsyncIterator()
        guard let boundPort = await iterator.next() else {
            task.cancel()
            _ = try await task.value
            throw CancellationError()
        }
        let urlHost = host.contains(":") ? "[\(host)]" : host
        return RunningServer(url: URL(string: "http://\(urlHost):\(boundPort)/")!, task: task)
    }
}

/// A server started by ``StaticFileServer/start(onRequest:)``.
public struct RunningServer: Sendable {
    /// The root URL, ending in `/`.
    public let url: URL
    let task: Task<Void, any Error>

    /// Blocks until the server stops (it stops when the calling task is cancelled).
    public func wait() async throws {
        try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Stops accepting requests and waits for the server to close.
    public func stop() async {
        task.cancel()
        _ = try? await task.value
    }
}

/// Reports each request after the file middleware has answered it.
private struct ExchangeRecorder<Context: RequestContext>: RouterMiddleware {
    let onRequest: @Sendable (StaticFileServer.Exchange) -> Void

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
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
