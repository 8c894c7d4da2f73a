import Synchronization

/// Collects the requests a ``StaticFileServer`` answers, for a demo or a test to inspect.
public final class ExchangeLog: Sendable {
    private let exchanges = Mutex<[StaticFileServer.Exchange]>([])

    public init() {}

    /// Pass this as the server's `onRequest`.
    public func record(_ exchange: StaticFileServer.Exchange) {
        exchanges.withLock { $0.append(exchange) }
    }

    /// Everything recorded so far.
    public var all: [StaticFileServer.Exchange] { exchanges.withLock { $0 } }

    public func removeAll() { exchanges.withLock { $0.removeAll() } }
}
