// Compiled where URLSession is at hand: always on Apple platforms, on Linux with the package's
// `LinuxURLSession` trait (FoundationNetworking, hence libcurl).
#if !canImport(FoundationNetworking) || LinuxURLSession
import Synchronization

// `URLSessionConfiguration` is Foundation's on Apple platforms, FoundationNetworking's on Linux.
#if canImport(FoundationNetworking)
import Foundation
package import FoundationNetworking
#else
package import Foundation
#endif

/// `HTTPTransport` over `URLSession`: the system's own HTTP stack on Apple platforms (HTTP/2
/// and HTTP/3, the system proxy and VPN settings, no extra code in the app), and
/// FoundationNetworking's on Linux.
///
/// It is the default transport of ``BundleSync``, ``PackageUpdater`` and ``Repository``: each
/// makes its own unless given one, so its lifetime is the owner's. To share one session's
/// connections between several of them, make one transport and pass it to each:
///
/// ```swift
/// let transport = URLSessionTransport()
/// let sync = BundleSync(remote: remote, store: store, transport: transport)
/// let notes = PackageUpdater(remote: notesURL, store: notesStore, transport: transport)
/// ```
///
/// Bodies stream with back-pressure: when more than 4 MB wait unread, the task is suspended
/// until the reader catches up. Responses are never taken from or put in a cache, cookies are
/// neither sent nor stored, and redirects follow `HTTPRedirect`'s rules, not URLSession's.
package final class URLSessionTransport: HTTPTransport {
    private let session: URLSession
    private let exchanges: ExchangeRegistry

    /// Creates a transport with its own `URLSession`.
    ///
    /// - Parameters:
    ///   - configuration: the session's configuration; caching and cookies are turned off in
    ///     a copy of it whatever it says (FreshAir makes its own conditional requests).
    ///   - connectionsPerHost: how many connections may be open to one host; match it to
    ///     ``SyncConfiguration/concurrency``.
    ///   - idleTimeout: the longest silence tolerated while a body streams.
    package init(
        configuration: URLSessionConfiguration = .ephemeral,
        connectionsPerHost: Int = 8,
        idleTimeout: Duration = .seconds(30)
    ) {
        let configuration = configuration.copy() as! URLSessionConfiguration
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpMaximumConnectionsPerHost = connectionsPerHost
        configuration.timeoutIntervalForRequest = idleTimeout.seconds
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "FreshAir.URLSessionTransport"
        exchanges = ExchangeRegistry()
        session = URLSession(configuration: configuration, delegate: SessionDelegate(exchanges), delegateQueue: queue)
    }

    deinit {
        // The session holds its delegate until invalidated; running tasks finish first.
        session.finishTasksAndInvalidate()
    }

    /// Runs `body` with a new transport and cancels whatever it left running afterwards.
    package static func withTransport<Result>(
        configuration: URLSessionConfiguration = .ephemeral,
        connectionsPerHost: Int = 8,
        _ body: (URLSessionTransport) async throws -> Result
    ) async rethrows -> Result {
        let transport = URLSessionTransport(configuration: configuration, connectionsPerHost: connectionsPerHost)
        defer { transport.session.invalidateAndCancel() }
        return try await body(transport)
    }

    package func get<Result: Sendable>(
        _ request: HTTPGetRequest,
        handle: (HTTPResponseHead, ResponseBody) async throws -> Result
    ) async throws -> Result {
        try await HTTPRedirect.following(request, send: send, handle: handle)
    }

    /// One GET, redirects not followed. The body cancels the task once nothing refers to it.
    private func send(_ request: HTTPGetRequest) async throws -> (HTTPResponseHead, ResponseBody) {
        var outgoing = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData)
        for header in request.headers { outgoing.addValue(header.value, forHTTPHeaderField: header.name) }
        let task = session.dataTask(with: outgoing)
        let exchange = Exchange(task: task, url: request.url, delegateQueue: session.delegateQueue)
        exchanges.add(exchange, for: task)
        let head = try await withTaskCancellationHandler {
            try await exchange.head(within: request.timeout)
        } onCancel: {
            task.cancel()
        }
        let body = ResponseBody {
            try await withTaskCancellationHandler {
                try await exchange.nextChunk()
            } onCancel: {
                task.cancel()
            }
        }
        return (head, body)
    }

    /// `URLError`s in the terms of `TransportError`, which keeps the `URLError`.
    static func translate(_ error: any Error, url: URL, headTimedOut: Bool) -> any Error {
        TransportError.keeping(error, in: classify(error, url: url, headTimedOut: headTimedOut))
    }

    private static func classify(_ error: any Error, url: URL, headTimedOut: Bool) -> any Error {
        guard let urlError = error as? URLError else {
            return TransportError(kind: .other, url: url, detail: String(describing: error))
        }
        switch urlError.code {
        case .cancelled where headTimedOut:
            return TransportError(kind: .timeout, url: url, detail: "no response within the request timeout")
        case .cancelled:
            return CancellationError()
        case .timedOut:
            return TransportError.serverSilent(url)
        case .cannotConnectToHost:
            return TransportError(
                kind: .connect,
                url: url,
                detail: posixReason(urlError) ?? "the server refused the connection or could not be reached"
            )
        case .cannotFindHost, .dnsLookupFailed:
            return TransportError(kind: .connect, url: url, detail: "the host name did not resolve")
        case .notConnectedToInternet, .internationalRoamingOff, .dataNotAllowed, .callIsActive:
            return TransportError(kind: .connect, url: url, detail: "the device is offline")
        case .secureConnectionFailed:
            // -1200 on Apple platforms; most often, in development, https:// to a plain server.
            return TransportError(
                kind: .tls,
                url: url,
                detail: "the secure connection failed (-1200): if the server serves plain HTTP, use an http:// URL"
            )
        case .unknown where urlError.localizedDescription.contains("wrong version number"):
            // FoundationNetworking's (libcurl's) words when the first bytes back were not TLS.
            return TransportError(
                kind: .tls,
                url: url,
                detail: "the server did not answer in TLS; if it serves plain HTTP, use an http:// URL"
            )
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
            .serverCertificateHasUnknownRoot, .clientCertificateRejected:
            return TransportError(
                kind: .tls,
                url: url,
                detail: "the secure connection failed (\(urlError.code.rawValue))"
            )
        case .networkConnectionLost:
            return TransportError.serverClosed(url)
        case .badServerResponse, .cannotParseResponse, .cannotDecodeRawData, .cannotDecodeContentData:
            return TransportError(kind: .interrupted, url: url, detail: "the server's response was not valid HTTP")
        case .appTransportSecurityRequiresSecureConnection:
            // -1022: Info.plist allows no plain http to this host (a development server, most often).
            return TransportError(
                kind: .connect,
                url: url,
                detail:
                    "App Transport Security allows no plain http here: serve over https, or, for a development server "
                    + "on 127.0.0.1 or the local network, set NSAppTransportSecurity > NSAllowsLocalNetworking in "
                    + "Info.plist (and, on a device, NSLocalNetworkUsageDescription)"
            )
        case .unknown:
            // What FoundationNetworking reports for a connection cut mid-body.
            return TransportError(kind: .interrupted, url: url, detail: "the transfer failed before it was complete")
        default:
            return TransportError(
                kind: .other,
                url: url,
                detail: "the request failed: \(urlError.localizedDescription) (URLError \(urlError.code.rawValue))"
            )
        }
    }
}

extension URLSessionTransport {
    /// `strerror`'s words ("connection refused") when the error carries a POSIX code, as
    /// Apple's URL loading system does; FoundationNetworking's errors carry none.
    static func posixReason(_ error: URLError) -> String? {
        let info = (error as NSError).userInfo
        guard info["_kCFStreamErrorDomainKey"] as? Int == 1,
            let code = info["_kCFStreamErrorCodeKey"] as? Int32
                ?? (info["_kCFStreamErrorCodeKey"] as? Int).map(Int32.init)
        else { return nil }
        return String(cString: strerror(code)).lowercased()
    }
}

/// One request's response, handed from the session's delegate queue to the task reading it.
/// Unchecked `Sendable`: shared state is in a `Mutex`; `taskSuspended` is touched only on the
/// serial delegate queue.
private final class Exchange: @unchecked Sendable {
    /// Buffered bytes above which the task is suspended, and below which it resumes.
    static let highWater = 4 << 20
    static let lowWater = 1 << 20
    #if canImport(FoundationNetworking)
    /// swift-corelibs-foundation's URLSession re-delivers body bytes after a data task is
    /// suspended and resumed (measured: 300 MB to 1 GB arrived for a 200 MB body), so on
    /// Linux the body is buffered without suspending the task; the digest and size checks
    /// would refuse such a body, but a large download would never complete. Use
    /// `AsyncHTTPClientTransport` on Linux for content larger than memory allows.
    static let suspendsTask = false
    #else
    static let suspendsTask = true
    #endif

    private struct State {
        var headWaiter: CheckedContinuation<HTTPResponseHead, any Error>?
        var head: Result<HTTPResponseHead, any Error>?
        var headTimedOut = false
        var chunks: [[UInt8]] = []
        var buffered = 0
        var end: Result<Void, any Error>?
        var reader: CheckedContinuation<[UInt8]?, any Error>?
        var suspended = false
    }

    let task: URLSessionDataTask
    let url: URL
    private let state = Mutex(State())
    /// The session's serial delegate queue: every suspend and resume of the task happens there,
    /// in order, so that a resume can never overtake the suspend it answers.
    private let delegateQueue: OperationQueue
    /// Whether the task is suspended now; touched only on `delegateQueue`.
    private var taskSuspended = false

    init(task: URLSessionDataTask, url: URL, delegateQueue: OperationQueue) {
        self.task = task
        self.url = url
        self.delegateQueue = delegateQueue
    }

    /// Suspends or resumes the task as `State/suspended` now says; on `delegateQueue` only.
    private func applyFlowControl() {
        let wanted = state.withLock { $0.suspended && $0.end == nil }
        guard wanted != taskSuspended else { return }
        taskSuspended = wanted
        if wanted { task.suspend() } else { task.resume() }
    }

    deinit {
        // Nobody reads this body any more (a redirect's, or one abandoned after an error).
        if state.withLock({ $0.end == nil }) { task.cancel() }
    }

    /// Starts the task and waits for the response head, at most `timeout`.
    func head(within timeout: Duration) async throws -> HTTPResponseHead {
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout.seconds) { [weak self] in self?.headTimeout() }
        return try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<HTTPResponseHead, any Error>? in
                if let head = state.head { return head }
                state.headWaiter = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) } else { task.resume() }
        }
    }

    private func headTimeout() {
        let late = state.withLock { state -> Bool in
            guard state.head == nil else { return false }
            state.headTimedOut = true
            return true
        }
        if late { task.cancel() }
    }

    /// The delegate's `didReceive response`.
    func received(_ response: URLResponse) {
        let head: Result<HTTPResponseHead, any Error>
        if let http = response as? HTTPURLResponse {
            let headers = http.allHeaderFields.compactMap { name, value -> (name: String, value: String)? in
                guard let name = name as? String else { return nil }
                return (name, value as? String ?? String(describing: value))
            }
            head = .success(HTTPResponseHead(status: http.statusCode, headers: headers))
        } else {
            head = .failure(TransportError(kind: .other, url: url, detail: "the answer was not an HTTP response"))
        }
        deliverHead(head)
    }

    private func deliverHead(_ head: Result<HTTPResponseHead, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<HTTPResponseHead, any Error>? in
            guard state.head == nil else { return nil }
            state.head = head
            defer { state.headWaiter = nil }
            return state.headWaiter
        }
        waiter?.resume(with: head)
    }

    /// The delegate's `didReceive data`.
    func received(_ data: Data) {
        let bytes = [UInt8](data)
        let reader = state.withLock { state -> CheckedContinuation<[UInt8]?, any Error>? in
            if let reader = state.reader {
                state.reader = nil
                return reader
            }
            state.chunks.append(bytes)
            state.buffered += bytes.count
            if Self.suspendsTask, state.buffered > Self.highWater { state.suspended = true }
            return nil
        }
        reader?.resume(returning: bytes)
        applyFlowControl()  // called on the delegate queue
    }

    /// The delegate's `didCompleteWithError`.
    func completed(_ error: (any Error)?) {
        let end: Result<Void, any Error>
        if let error {
            let timedOut = state.withLock { $0.headTimedOut }
            end = .failure(URLSessionTransport.translate(error, url: url, headTimedOut: timedOut))
        } else {
            end = .success(())
        }
        if case .failure(let error) = end { deliverHead(.failure(error)) }
        let reader = state.withLock { state -> CheckedContinuation<[UInt8]?, any Error>? in
            state.end = end
            defer { state.reader = nil }
            return state.reader
        }
        switch end {
        case .success: reader?.resume(returning: nil)
        case .failure(let error): reader?.resume(throwing: error)
        }
    }

    /// The next chunk of the body, `nil` at its end.
    func nextChunk() async throws -> [UInt8]? {
        try await withCheckedThrowingContinuation { continuation in
            enum Step {
                case chunk([UInt8])
                case end(Result<Void, any Error>)
                case wait
            }
            let (step, resumeTask) = state.withLock { state -> (Step, Bool) in
                let step: Step
                if !state.chunks.isEmpty {
                    let chunk = state.chunks.removeFirst()
                    state.buffered -= chunk.count
                    step = .chunk(chunk)
                } else if let end = state.end {
                    step = .end(end)
                } else {
                    state.reader = continuation
                    step = .wait
                }
                guard state.suspended, state.buffered < Self.lowWater else { return (step, false) }
                state.suspended = false
                return (step, true)
            }
            if resumeTask { delegateQueue.addOperation { self.applyFlowControl() } }
            switch step {
            case .chunk(let chunk): continuation.resume(returning: chunk)
            case .end(.success): continuation.resume(returning: nil)
            case .end(.failure(let error)): continuation.resume(throwing: error)
            case .wait: break
            }
        }
    }
}

/// The exchanges in flight, by task, held weakly: an exchange lives as long as its body.
private final class ExchangeRegistry: Sendable {
    private struct Entry { weak var exchange: Exchange? }
    private let entries = Mutex<[Int: Entry]>([:])

    func add(_ exchange: Exchange, for task: URLSessionTask) {
        entries.withLock { $0[task.taskIdentifier] = Entry(exchange: exchange) }
    }

    func exchange(for task: URLSessionTask) -> Exchange? {
        entries.withLock { $0[task.taskIdentifier]?.exchange }
    }

    func remove(_ task: URLSessionTask) {
        entries.withLock { _ = $0.removeValue(forKey: task.taskIdentifier) }
    }
}

/// Routes the session's callbacks to each task's `Exchange`.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let exchanges: ExchangeRegistry

    init(_ exchanges: ExchangeRegistry) {
        self.exchanges = exchanges
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        exchanges.exchange(for: dataTask)?.received(response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        exchanges.exchange(for: dataTask)?.received(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        exchanges.exchange(for: task)?.completed(error)
        exchanges.remove(task)
    }

    /// Redirects come back as responses: `HTTPRedirect` decides whether to follow them.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
#endif
