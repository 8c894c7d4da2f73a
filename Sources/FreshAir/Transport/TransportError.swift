import Foundation

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
