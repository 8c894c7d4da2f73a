package import Foundation

/// Bytes of a response body in whatever storage the transport received them in (an array,
/// `Data`, SwiftNIO's `ByteBuffer`), read where they are: copying every chunk into a new array
/// first cost a 1 GB download a copy of each byte and an allocation per chunk.
package protocol BodyBytes: Sendable {
    var count: Int { get }
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result
}

extension [UInt8]: BodyBytes {}
extension Data: BodyBytes {}

extension BodyBytes {
    /// The bytes, copied into an array (tests read bodies so).
    package var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}

/// A response body delivered in chunks as they arrive, with back-pressure: the next chunk
/// is read from the network only when the consumer asks for it.
package struct ResponseBody: AsyncSequence {
    package typealias Element = any BodyBytes

    private let nextChunk: () async throws -> (any BodyBytes)?

    /// Wraps any iterator-like closure; `nil` ends the body.
    package init(next: @escaping () async throws -> (any BodyBytes)?) {
        self.nextChunk = next
    }

    package struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let nextChunk: () async throws -> (any BodyBytes)?
        package mutating func next() async throws -> (any BodyBytes)? { try await nextChunk() }
    }

    package func makeAsyncIterator() -> AsyncIterator { AsyncIterator(nextChunk: nextChunk) }

    /// Collects the whole body, refusing more than `limit` bytes.
    ///
    /// - Parameter announced: the size the server announced, reserved at once (up to
    ///   `limit`) so that a large document does not grow by copies.
    package func collect(upTo limit: Int, announced: Int64? = nil) async throws -> Data {
        var data = Data()
        if let announced, announced > 0 { data.reserveCapacity(Int(Swift.min(announced, Int64(limit)))) }
        for try await chunk in self {
            guard data.count + chunk.count <= limit else { throw BodyTooLarge(limit: Int64(limit)) }
            chunk.withUnsafeBytes { data.append(contentsOf: $0) }
        }
        return data
    }

    /// The body, abandoned with a `TransportError/Kind/timeout` once a window of
    /// `floor.window` has passed with fewer than `floor.bytesPerSecond` bytes a second: a server
    /// that dribbles a byte every few seconds never trips an idle timeout, and would hold a
    /// sync (and its store's lock) for ever. `uptime` is the run's monotonic clock.
    func enforcing(_ floor: ThroughputFloor, url: URL, uptime: @escaping @Sendable () -> Duration) -> ResponseBody {
        var iterator = makeAsyncIterator()
        var windowStart = uptime()
        var windowBytes: Int64 = 0
        return ResponseBody {
            guard let chunk = try await iterator.next() else { return nil }
            windowBytes += Int64(chunk.count)
            let elapsed = uptime() - windowStart
            if elapsed >= floor.window {
                let required = Double(floor.bytesPerSecond) * elapsed.seconds
                guard Double(windowBytes) >= required else {
                    throw TransportError(
                        kind: .timeout,
                        url: url,
                        detail:
                            "\(windowBytes) bytes in \(Int(elapsed.seconds)) s, below the floor of \(floor.bytesPerSecond) bytes/s "
                            + "(SyncConfiguration.minimumThroughput)"
                    )
                }
                (windowStart, windowBytes) = (uptime(), 0)
            }
            return chunk
        }
    }

    /// Thrown by ``collect(upTo:)``.
    package struct BodyTooLarge: Error, Sendable {
        /// The cap that was passed.
        package var limit: Int64
    }
}
