import Foundation

/// How FreshAir follows redirects: at most ``limit`` of them, never in a circle, only to http
/// or https, and never from https down to plain http (where anyone on the path could answer);
/// credentials are not carried to another host.
enum HTTPRedirect {
    /// The most redirects one request follows.
    static let limit = 5

    /// Statuses that redirect a GET.
    static let statuses: Set<Int> = [301, 302, 303, 307, 308]

    /// Where `location` sends a request for `url`, or a ``TransportError`` saying why not.
    static func target(of location: String, from url: URL, visited: [URL]) throws(TransportError) -> URL {
        guard let next = URL(string: location, relativeTo: url)?.absoluteURL, let scheme = next.scheme?.lowercased(),
              scheme == "http" || scheme == "https", next.host != nil
        else {
            throw TransportError(kind: .other, url: url, detail: "the server redirects to \"\(location.debugEscaped)\", which is not an http(s) URL")
        }
        if url.scheme?.lowercased() == "https", scheme == "http" {
            throw TransportError(kind: .other, url: url, detail: "the server redirects from https to plain http (\(next.absoluteString)), which is refused")
        }
        if visited.contains(where: { $0.absoluteString == next.absoluteString }) || visited.count > limit {
            throw TransportError(kind: .other, url: url, detail: "the server redirects in a loop")
        }
        return next
    }

    /// The headers to send to `next`: all of them on the same host, none that carry
    /// credentials to another.
    static func headers(_ headers: [(name: String, value: String)], from url: URL, to next: URL) -> [(name: String, value: String)] {
        guard url.host?.lowercased() != next.host?.lowercased() || url.port != next.port else { return headers }
        return headers.filter { header in
            !["Authorization", "Cookie", "Proxy-Authorization"].contains { HTTPResponseHead.namesMatch($0, header.name) }
        }
    }
}
