import Foundation

/// How FreshAir follows redirects: at most five of them, never in a circle, only to http
/// or https, and never from https down to plain http (where anyone on the path could answer);
/// credentials are not carried to another host.
///
/// Every transport FreshAir ships follows redirects through ``following(_:send:handle:)``
/// (their own HTTP clients' redirect handling is turned off); a custom `HTTPTransport` can
/// too.
package enum HTTPRedirect {
    /// The most redirects one request follows.
    static let limit = 5

    /// Statuses that redirect a GET.
    static let statuses: Set<Int> = [301, 302, 303, 307, 308]

    /// Where `location` sends a request for `url`, or a `TransportError` saying why not.
    static func target(of location: String, from url: URL, visited: [URL]) throws(TransportError) -> URL {
        guard let next = URL(string: location, relativeTo: url)?.absoluteURL, let scheme = next.scheme?.lowercased(),
            scheme == "http" || scheme == "https", next.host != nil
        else {
            throw TransportError(
                kind: .redirect,
                url: url,
                detail: "the server redirects to \"\(location.debugEscaped)\", which is not an http(s) URL"
            )
        }
        if url.scheme?.lowercased() == "https", scheme == "http" {
            throw TransportError(
                kind: .redirect,
                url: url,
                detail: "the server redirects from https to plain http (\(next.absoluteString)), which is refused"
            )
        }
        if visited.contains(where: { $0.absoluteString == next.absoluteString }) {
            throw TransportError(
                kind: .redirect,
                url: url,
                detail: "the server redirects in a loop, back to \(next.absoluteString)"
            )
        }
        if visited.count > limit {
            throw TransportError(
                kind: .redirect,
                url: url,
                detail: "the server redirects more than \(limit) times (last to \(next.absoluteString)); "
                    + "point the app at the final URL"
            )
        }
        return next
    }

    /// The headers to send to `next`: all of them on the same host, none that carry
    /// credentials to another.
    static func headers(
        _ headers: [(name: String, value: String)],
        from url: URL,
        to next: URL
    ) -> [(name: String, value: String)] {
        guard url.host?.lowercased() != next.host?.lowercased() || url.port != next.port else { return headers }
        return headers.filter { header in
            !["Authorization", "Cookie", "Proxy-Authorization"].contains {
                HTTPResponseHead.namesMatch($0, header.name)
            }
        }
    }

    /// Sends `request` with `send`, follows redirects by these rules, and hands the final
    /// response to `handle`.
    ///
    /// - Parameters:
    ///   - request: the first request.
    ///   - send: sends one GET without following redirects. A body left unread (a redirect's,
    ///     after its first 64 KB) must release its connection when it is no longer referenced.
    ///   - handle: receives the first response that is not a redirect.
    /// - Throws: `TransportError` for a refused redirect, else what `send` or `handle` throw.
    package static func following<Result: Sendable>(
        _ request: HTTPGetRequest,
        send: (HTTPGetRequest) async throws -> (HTTPResponseHead, ResponseBody),
        handle: (HTTPResponseHead, ResponseBody) async throws -> Result
    ) async throws -> Result {
        var request = request
        var visited = [request.url]
        while true {
            let (head, body) = try await send(request)
            guard statuses.contains(head.status), let location = head["Location"] else {
                return try await handle(head, body)
            }
            let next = try target(of: location, from: request.url, visited: visited)
            // A redirect's body is a short note: read a little of it so the connection is reused.
            var drained = 0
            for try await chunk in body {
                drained += chunk.count
                if drained > 64 << 10 { break }
            }
            request.headers = headers(request.headers, from: request.url, to: next)
            visited.append(next)
            request.url = next
        }
    }
}
