import AsyncHTTPClient
import Crypto
import Foundation
import FreshAir
import FreshAirAsyncHTTPClient
import NIOCore
import NIOHTTP1

/// How breeze talks to S3 beyond where: attempts, part size, headers.
package struct S3Options: Sendable {
    /// Files larger than this go up as a multipart upload, in parts of this size (S3 takes
    /// 5 MiB to 5 GiB, and at most 10,000 parts: a larger file gets larger parts).
    package var partSize: Int64 = 8 << 20
    /// Parts of one file sent at once.
    package var partConcurrency = 4
    /// Tries per request before a `5xx`, `SlowDown` or a network failure is final.
    package var attempts = 4
    /// A canned ACL for every object (`public-read` lets devices read the bucket over plain
    /// HTTP); `nil` sends none, for buckets that refuse ACLs.
    package var acl: String?
    /// The `Cache-Control` each object gets.
    package var cachePolicy = CachePolicy()
    /// Make the bucket before anything else when it does not exist: a new Ceph, MinIO or R2
    /// server has none (`--create-bucket`). Off by default: a mistyped name would be created.
    package var createsBucket = false
    /// The longest wait for a connection; a refused one fails at once.
    package var connectTimeout: Duration = .seconds(10)
    /// The longest silence while a response streams. 14 s: with 4 tries and their back-off, a
    /// server that takes requests and never answers is given up on within a minute.
    package var idleTimeout: Duration = .seconds(14)
    /// A request still unanswered this long is reported through ``onRetry`` (once), so that a
    /// hung endpoint is not a silent wait.
    package var noteWaitingAfter: Duration = .seconds(10)
    /// First back-off after a failed attempt; it doubles each time, with jitter.
    package var retryDelay: Duration = .milliseconds(250)
    /// Told, in words, of every request that is tried again and why ("PUT s3://b/k: no answer
    /// within 60 s; trying again (2 of 4)"), so that a gateway that takes a request and never
    /// answers (a Ceph cluster with a full OSD) is not a silent wait of minutes.
    package var onRetry: (@Sendable (String) -> Void)?

    package static let minimumPartSize: Int64 = 5 << 20
    package static let maximumParts: Int64 = 10_000

    package init() {}
}

/// Signed requests to one bucket, each retried with back-off when S3 asks to slow down,
/// fails on its side, or the connection does; everything else is answered at once.
///
/// Owns no connections: the ``HTTPClient`` belongs to whoever made the destination (see
/// ``PublishDestinations/with(_:endpoint:region:options:environment:_:)``).
struct S3Client: Sendable {
    let http: HTTPClient
    let bucket: String
    let region: String
    /// An S3-compatible server; `nil` for AWS.
    let endpoint: URL?
    let signer: S3RequestSigner
    let options: S3Options

    /// A request's body, made anew for every attempt.
    enum Payload: Sendable {
        case bytes([UInt8])
        /// `length` bytes of a file from `offset`, whose SHA-256 is known.
        case file(URL, offset: Int64, length: Int64, sha256: String)

        var sha256: String {
            switch self {
            case .bytes(let bytes): S3RequestSigner.hex(SHA256.hash(data: bytes))
            case .file(_, _, _, let sha256): sha256
            }
        }

        func body() throws -> HTTPClientRequest.Body {
            switch self {
            case .bytes(let bytes):
                return .bytes(bytes)
            case .file(let url, let offset, let length, _):
                // Opened here, so an unreadable file fails before the request, not as an empty body.
                let handle = try FileHandle(forReadingFrom: url)
                try handle.seek(toOffset: UInt64(offset))
                return .stream(FileChunks(handle: handle, remaining: length), length: .known(length))
            }
        }
    }

    /// What S3 answered.
    struct Response: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: String

        /// S3's error code (`SlowDown`, `NoSuchBucket`), when the body is an error document.
        var code: String? { S3XML.values(of: "Code", in: body).first }
    }

    /// Scheme and host, and the path of an object key: `/<bucket>/<key>` path-style on a
    /// custom endpoint, `/<key>` on `<bucket>.s3.<region>.amazonaws.com`.
    func location(ofKey key: String) -> (base: String, host: String, path: String) {
        if let endpoint {
            let host = endpoint.host! + (endpoint.port.map { ":\($0)" } ?? "")
            let basePath = endpoint.path.hasSuffix("/") ? String(endpoint.path.dropLast()) : endpoint.path
            return ("\(endpoint.scheme!)://\(host)", host, "\(basePath)/\(bucket)" + (key.isEmpty ? "" : "/\(key)"))
        }
        let host = "\(bucket).s3.\(region).amazonaws.com"
        return ("https://\(host)", host, "/\(key)")
    }

    /// Sends one signed request, again after a pause while the answer is one worth waiting
    /// out, and returns the last answer. `what` names the request in errors ("PUT s3://b/k").
    ///
    /// - Throws: ``PublishError`` of kind `network` when no answer came after every attempt.
    func send(
        _ method: HTTPMethod,
        key: String,
        query: [(String, String)] = [],
        headers: [(String, String)] = [],
        payload: Payload? = nil,
        what: String
    ) async throws -> Response {
        // Requests that send a file may take longer to send than this; those of a few bytes may not.
        let small: Bool
        switch payload {
        case nil: small = true
        case .bytes(let bytes)?: small = bytes.count < 1 << 20
        default: small = false
        }
        let waiting = Task { [options] in
            guard small else { return }
            try await Task.sleep(for: options.noteWaitingAfter)
            options.onRetry?(
                "\(what): no answer after \(options.noteWaitingAfter.components.seconds) s; each try waits up to "
                    + "\(options.idleTimeout.components.seconds) s, \(options.attempts) tries (--timeout sets it)"
            )
        }
        defer { waiting.cancel() }
        var attempt = 1
        while true {
            let response: Response
            do {
                response = try await sendOnce(method, key: key, query: query, headers: headers, payload: payload)
            } catch let error as PublishError {
                throw error
            } catch {
                let reason = Self.reason(error, base: location(ofKey: key).base, idleTimeout: options.idleTimeout)
                guard attempt < options.attempts, !(error is CancellationError) else {
                    throw PublishError(
                        "\(what): \(reason) (\(attempt) attempts); "
                            + "check the endpoint and the network, then publish again",
                        kind: .network
                    )
                }
                options.onRetry?("\(what): \(reason); trying again (\(attempt + 1) of \(options.attempts))")
                try await pause(before: attempt + 1, retryAfter: nil)
                attempt += 1
                continue
            }
            guard Self.isWorthRetrying(response), attempt < options.attempts else { return response }
            options.onRetry?(
                "\(what): HTTP \(response.status)\(response.code.map { " \($0)" } ?? ""); "
                    + "trying again (\(attempt + 1) of \(options.attempts))"
            )
            try await pause(before: attempt + 1, retryAfter: response.headers.first(name: "retry-after"))
            attempt += 1
        }
    }

    private func sendOnce(
        _ method: HTTPMethod,
        key: String,
        query: [(String, String)],
        headers: [(String, String)],
        payload: Payload?
    ) async throws -> Response {
        let (base, host, path) = location(ofKey: key)
        let signed = signer.sign(
            method: method.rawValue,
            path: path,
            query: query,
            headers: [("host", host)] + headers,
            payloadHash: payload?.sha256 ?? S3RequestSigner.emptyPayloadHash,
            date: Date()
        )
        let queryText = S3RequestSigner.canonicalQuery(query)
        var request = HTTPClientRequest(
            url: base + S3RequestSigner.encodePath(path) + (queryText.isEmpty ? "" : "?\(queryText)")
        )
        request.method = method
        request.headers.add(name: "user-agent", value: BreezeVersion.userAgent)
        for (name, value) in signed where name != "host" { request.headers.add(name: name, value: value) }
        if let payload {
            do { request.body = try payload.body() } catch {
                throw PublishError(
                    "could not read what \(method.rawValue) \(path) sends: \(FileErrorWords.words(error))",
                    kind: .local
                )
            }
        }
        let response = try await http.execute(request, timeout: .seconds(300))
        // Error documents and listings are small; a body past this is not S3's.
        let body = try await response.body.collect(upTo: 16 << 20)
        return Response(status: Int(response.status.code), headers: response.headers, body: String(buffer: body))
    }

    /// The status of a GET of `key` sent with no credentials, as a device sends it.
    func anonymousStatus(ofKey key: String) async throws -> Int {
        let (base, _, path) = location(ofKey: key)
        var request = HTTPClientRequest(url: base + S3RequestSigner.encodePath(path))
        request.method = .GET
        request.headers.add(name: "user-agent", value: BreezeVersion.userAgent)
        request.headers.add(name: "range", value: "bytes=0-0")
        let response = try await http.execute(request, timeout: .seconds(60))
        _ = try await response.body.collect(upTo: 1 << 20)
        return Int(response.status.code)
    }

    /// S3's way of saying "not now": a throttle, a failure on its side, a request it gave up on.
    static func isWorthRetrying(_ response: Response) -> Bool {
        if [429, 500, 502, 503, 504].contains(response.status) { return true }
        return ["SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable"].contains(response.code ?? "")
    }

    /// Exponential back-off with jitter ("full jitter" halved), or what `Retry-After` asks, up to 20 s.
    private func pause(before attempt: Int, retryAfter: String?) async throws {
        let base = options.retryDelay * (1 << min(attempt - 2, 10))
        var delay = base / 2 + base / 2 * Double.random(in: 0...1)
        if let seconds = retryAfter.flatMap(Int.init), seconds >= 0 { delay = max(delay, .seconds(seconds)) }
        try await Task.sleep(for: min(delay, .seconds(20)))
    }

    /// A network failure in words a person can act on ("could not connect to …: connection refused").
    static func reason(_ error: any Error, base: String, idleTimeout: Duration) -> String {
        if let error = error as? HTTPClientError {
            if error == .deadlineExceeded { return "no answer within 300 s" }
            if error == .readTimeout { return "no answer within \(idleTimeout.components.seconds) s" }
        }
        let translated = AsyncHTTPClientTransport.translate(error, url: URL(string: base) ?? URL(string: "s3:")!)
        return String(describing: translated)
    }
}

/// `length` bytes of a file as a stream of buffers, read as the upload asks for them.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let handle: FileHandle
    let remaining: Int64

    struct AsyncIterator: AsyncIteratorProtocol {
        let handle: FileHandle
        var remaining: Int64
        mutating func next() async throws -> ByteBuffer? {
            guard remaining > 0, let chunk = try handle.read(upToCount: Int(Swift.min(1 << 20, remaining))),
                !chunk.isEmpty
            else {
                try? handle.close()
                return nil
            }
            remaining -= Int64(chunk.count)
            return ByteBuffer(bytes: chunk)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(handle: handle, remaining: remaining) }
}
