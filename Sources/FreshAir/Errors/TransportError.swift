package import Foundation

/// A failure below HTTP: nothing usable came back.
package struct TransportError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure.
    package enum Kind: Sendable {
        /// Could not connect (refused, DNS, offline).
        case connect
        /// The secure connection could not be made: a handshake with a server that does not
        /// speak TLS there, a certificate not trusted or out of date. The server or the URL must
        /// change: trying again gets the same answer.
        case tls
        /// The server went quiet for longer than the timeout.
        case timeout
        /// The connection closed before the body was complete.
        case interrupted
        /// A redirect FreshAir does not follow (`HTTPRedirect`): to a scheme other than
        /// http(s), from https to http, in a loop, or too many. The server must change, not the
        /// network: trying again gets the same answer.
        case redirect
        /// Anything else the transport reports.
        case other
    }

    /// What kind of failure.
    package var kind: Kind
    /// The URL being fetched.
    package var url: URL
    /// What happened, in words a person can act on ("connection refused").
    package var detail: String
    /// The transport's own error (a `URLError`, AsyncHTTPClient's or NIO's), for callers that
    /// look deeper than ``kind``.
    package var underlying: (any Error)?

    /// A failure of `kind` for `url`; transports write `detail` for people and keep their own
    /// error as `underlying`.
    package init(kind: Kind, url: URL, detail: String, underlying: (any Error)? = nil) {
        self.kind = kind
        self.url = url
        self.detail = detail
        self.underlying = underlying
    }

    /// The server closed the connection before the answer was whole: every transport's words
    /// for it, so that retry rules and messages read one way.
    package static func serverClosed(_ url: URL) -> TransportError {
        TransportError(kind: .interrupted, url: url, detail: "the server closed the connection")
    }

    /// The server sent nothing for the idle timeout while more of its answer was awaited: every
    /// transport's words for it.
    package static func serverSilent(_ url: URL) -> TransportError {
        TransportError(kind: .timeout, url: url, detail: "the server sent nothing within the idle timeout")
    }

    /// `translated` (a transport's reading of `error`) with `error` kept as its ``underlying``.
    package static func keeping(_ error: any Error, in translated: any Error) -> any Error {
        guard var transportError = translated as? TransportError, transportError.underlying == nil else {
            return translated
        }
        transportError.underlying = error
        return transportError
    }

    package var description: String {
        switch kind {
        case .connect: return "could not connect to \(url.host ?? url.absoluteString): \(detail)"
        case .tls: return "could not connect securely to \(url.host ?? url.absoluteString): \(detail)"
        case .timeout: return "\(url) timed out: \(detail)"
        case .interrupted: return "the connection for \(url) closed early: \(detail)"
        case .redirect, .other: return "\(url): \(detail)"
        }
    }
}
