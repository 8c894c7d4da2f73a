import Foundation

/// The default transport of a Linux build without the `LinuxURLSession` trait: it has no HTTP
/// stack of its own, so every request fails with a message naming what to pass instead.
struct NoDefaultTransport: HTTPTransport {
    func get<Result: Sendable>(
        _ request: HTTPGetRequest,
        handle: (HTTPResponseHead, ResponseBody) async throws -> Result
    ) async throws -> Result {
        throw TransportError(
            kind: .other,
            url: request.url,
            detail: "this build of FreshAir has no default transport: URLSession was left out "
                + "(the LinuxURLSession trait is off). Pass one, such as "
                + "Transport(AsyncHTTPClientTransport()) from FreshAirAsyncHTTPClient, "
                + "or depend on FreshAir with its default traits"
        )
    }
}
