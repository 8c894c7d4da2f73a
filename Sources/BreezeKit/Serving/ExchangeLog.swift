import Synchronization

/// Collects the requests a ``StaticFileServer`` answers, for a demo or a test to inspect.
package final class ExchangeLog: Sendable {
    private let exchanges = Mutex<[StaticFileServer.Exchange]>([])

    package init() {}

    /// Pass this as the server's `onRequest`.
    package func record(_ exchange: StaticFileServer.Exchange) {
        exchanges.withLock { $0.append(exchange) }
    }

    /// Everything recorded so far.
    package var all: [StaticFileServer.Exchange] { exchanges.withLock { $0 } }

    package func removeAll() { exchanges.withLock { $0.removeAll() } }
}
