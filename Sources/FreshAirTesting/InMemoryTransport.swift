import Foundation
import FreshAir

/// The transport ``InMemoryServer/transport`` wraps: every request answered by the server,
/// its body in chunks, as a network delivers it.
struct InMemoryTransport: HTTPTransport {
    let server: InMemoryServer
    /// Bytes per body chunk.
    static let chunkSize = 64 * 1024

    func get<Result: Sendable>(
        _ request: HTTPGetRequest,
        handle: (HTTPResponseHead, ResponseBody) async throws -> Result
    ) async throws -> Result {
        let (status, headers, body, cutAfter) = try server.answer(request.url, headers: request.headers).get()
        let end = min(body.count, cutAfter ?? body.count)
        var offset = 0
        let url = request.url
        let chunks = ResponseBody {
            guard offset < end else {
                if end < body.count {
                    throw TransportError(
                        kind: .interrupted,
                        url: url,
                        detail: "the in-memory server cut the connection"
                    )
                }
                return nil
            }
            let next = min(offset + Self.chunkSize, end)
            defer { offset = next }
            return [UInt8](body[offset..<next])
        }
        return try await handle(HTTPResponseHead(status: status, headers: headers), chunks)
    }
}
