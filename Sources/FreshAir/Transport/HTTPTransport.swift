import Foundation
import NIOCore

/// The one HTTP operation FreshAir needs: a GET whose response body is streamed.
///
/// ``AsyncHTTPClientTransport`` is the implementation on every platform; an Apple app can
/// supply its own (over `URLSession`, say) by conforming to this protocol. The response is
/// only valid inside `handle`, which lets an implementation release the connection as soon as
/// the body has been read, or cancel it when `handle` throws.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and hands the response head and streaming body to `handle`.
    ///
    /// Throw ``TransportError`` for failures below HTTP (connection refused, reset,
    /// timeout); any HTTP status, including 4xx and 5xx, is a response, not an error.
    func get<Result: Sendable>(
        _ request: HTTPGetRequest,
        handle: (HTTPResponseHead, ResponseBody) async throws -> Result
    ) async throws -> Result
}

/// A GET request.
public struct HTTPGetRequest: Sendable {
    public var url: URL
    /// Extra headers, in order (`If-None-Match`, `Range`, an app's own `Authorization`…).
    public var headers: [(name: String, value: String)]
    /// The longest wait for the response head; the body is governed by the transport's
    /// idle timeout instead, so that large files are not cut off.
    public var timeout: Duration

    public init(url: URL, headers: [(name: String, value: String)] = [], timeout: Duration = .seconds(30)) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
    }
}

/// Status and headers of a response.
public struct HTTPResponseHead: Sendable {
    public var status: Int
    /// Headers as received; look them up with ``subscript(_:)``, which ignores case.
    public var headers: [(name: String, value: String)]

    public init(status: Int, headers: [(name: String, value: String)]) {
        self.status = status
        self.headers = headers
    }

    /// The first value of a header, matched without regard to case.
    public subscript(_ name: String) -> String? {
        headers.first { Self.namesMatch($0.name, name) }?.value
    }

    /// Header names are ASCII: compare them byte by byte, folding case (Foundation's
    /// locale-aware comparison cost several percent of a many-file sync).
    static func namesMatch(_ a: String, _ b: String) -> Bool {
        var left = a.utf8.makeIterator()
        var right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case (let x?, let y?) where x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= UInt8(ascii: "a") && (x | 0x20) <= UInt8(ascii: "z")): continue
            default: return false
            }
        }
    }

    /// `Content-Length`, when present and valid.
    public var contentLength: Int64? { self["Content-Length"].flatMap { Int64($0) } }
}

/// A response body delivered in chunks as they arrive, with back-pressure: the next chunk
/// is read from the network only when the consumer asks for it.
public struct ResponseBody: AsyncSequence {
    public typealias Element = ByteBuffer

    private let nextChunk: () async throws -> ByteBuffer?

    /// Wraps any iterator-like closure; `nil` ends the body.
    public init(next: @escaping () async throws -> ByteBuffer?) {
        self.nextChunk = next
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let nextChunk: () async throws -> ByteBuffer?
        public mutating func next() async throws -> ByteBuffer? { try await nextChunk() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(nextChunk: nextChunk) }

    /// Collects the whole body, refusing more than `limit` bytes.
    public func collect(upTo limit: Int) async throws -> Data {
        var data = Data()
        for try await var chunk in self {
            guard data.count + chunk.readableBytes <= limit else { throw BodyTooLarge(limit: Int64(limit)) }
            data.append(contentsOf: chunk.readBytes(length: chunk.readableBytes) ?? [])
        }
        return data
    }

    /// The body, abandoned with a ``TransportError/Kind/timeout`` once a window of
    /// `floor.window` has passed with fewer than `floor.bytesPerSecond` bytes a second: a server
    /// that dribbles a byte every few seconds never trips an idle timeout, and would hold a
    /// sync (and its store's lock) for ever.
    func enforcing(_ floor: ThroughputFloor, url: URL) -> ResponseBody {
        var iterator = makeAsyncIterator()
        var windowStart = ContinuousClock.now
        var windowBytes: Int64 = 0
        return ResponseBody {
            guard let chunk = try await iterator.next() else { return nil }
            windowBytes += Int64(chunk.readableBytes)
            let elapsed = ContinuousClock.now - windowStart
            if elapsed >= floor.window {
                let required = Double(floor.bytesPerSecond) * elapsed.seconds
                guard Double(windowBytes) >= required else {
                    throw TransportError(
                        kind: .timeout, url: url,
                        detail: "\(windowBytes) bytes in \(Int(elapsed.seconds)) s, below the floor of \(floor.bytesPerSecond) bytes/s "
                            + "(SyncConfiguration.minimumThroughput)")
                }
                (windowStart, windowBytes) = (ContinuousClock.now, 0)
            }
            return chunk
        }
    }

    /// The body, each chunk counted as received in `ledger`.
    func counted(by ledger: TransferLedger) -> ResponseBody {
        var iterator = makeAsyncIterator()
        return ResponseBody {
            guard let chunk = try await iterator.next() else { return nil }
            ledger.receive(Int64(chunk.readableBytes))
            return chunk
        }
    }

    /// Thrown by ``collect(upTo:)``.
    public struct BodyTooLarge: Error, Sendable {
        public var limit: Int64
    }
}

/// A failure below HTTP: nothing usable came back.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable {
        /// Could not connect (refused, DNS, TLS).
        case connect
        /// The server went quiet for longer than the timeout.
        case timeout
        /// The connection closed before the body was complete.
        case interrupted
        /// Anything else the transport reports.
        case other
    }

    public var kind: Kind
    public var url: URL
    public var detail: String

    public init(kind: Kind, url: URL, detail: String) {
        self.kind = kind
        self.url = url
        self.detail = detail
    }

    public var description: String {
        switch kind {
        case .connect: return "could not connect to \(url.host ?? url.absoluteString): \(detail)"
        case .timeout: return "\(url) timed out: \(detail)"
        case .interrupted: return "the connection for \(url) closed early: \(detail)"
        case .other: return "\(url): \(detail)"
        }
    }
}
