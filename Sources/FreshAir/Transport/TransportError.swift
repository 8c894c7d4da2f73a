import Foundation

/// A failure below HTTP: nothing usable came back.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure.
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

    /// What kind of failure.
    public var kind: Kind
    /// The URL being fetched.
    public var url: URL
    /// What happened, in words a person can act on ("connection refused").
    public var detail: String

    /// A failure of `kind` for `url`; transports write `detail` for people.
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
