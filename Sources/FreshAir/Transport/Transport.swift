// On Linux, URLSession lives in FoundationNetworking, which loads libcurl: only with the package's
// `LinuxURLSession` trait (on by default). Apple platforms always have it, in Foundation, whose
// `URLSessionConfiguration` a public initializer here takes.
#if canImport(FoundationNetworking)
import Foundation
#if LinuxURLSession
public import FoundationNetworking
#endif
#else
public import Foundation
#endif

/// How FreshAir sends its requests: `URLSession` unless you say otherwise.
///
/// Every sync makes a transport of its own by default. Make one and pass it to every
/// ``FreshAirContent``, ``BundleSync``, ``PackageUpdater`` or ``Repository`` of the app to share
/// its connections:
///
/// ```swift
/// let transport = Transport.urlSession(connectionsPerHost: 8)
/// let content = FreshAirContent(remote: url, transport: transport)
/// ```
///
/// On Linux servers and tools, the `FreshAirAsyncHTTPClient` product adds
/// `Transport(_ client: AsyncHTTPClientTransport)`, which streams large bodies with
/// back-pressure. A Linux build that always passes such a transport can leave URLSession out,
/// and with it libcurl and its thirty shared libraries: depend on FreshAir with `traits: []`
/// (the `LinuxURLSession` trait). A sync given no transport then fails with a message that says
/// so. `file://` URLs never use a transport: they are read from disk.
public struct Transport: Sendable {
    /// The implementation; any `HTTPTransport` inside the package.
    package let base: any HTTPTransport

    /// Wraps an implementation (AsyncHTTPClient's, a test's).
    package init(_ base: any HTTPTransport) {
        self.base = base
    }

    /// The transport a sync makes when given none: URLSession where this build has it.
    package static func platformDefault(connectionsPerHost: Int) -> any HTTPTransport {
        #if !canImport(FoundationNetworking) || LinuxURLSession
        URLSessionTransport(connectionsPerHost: connectionsPerHost)
        #else
        NoDefaultTransport()
        #endif
    }

    #if !canImport(FoundationNetworking) || LinuxURLSession
    /// The system's `URLSession` (swift-corelibs-foundation's on Linux), with caching and
    /// cookies off, redirects followed by FreshAir's rules, and at most `connectionsPerHost`
    /// connections to one host. It lives as long as any sync holds it.
    ///
    /// - Parameters:
    ///   - configuration: the session's configuration (a background session's is not
    ///     supported: FreshAir streams bodies through a delegate).
    ///   - connectionsPerHost: match it to ``SyncConfiguration/concurrency``.
    ///   - idleTimeout: the longest silence tolerated while a body streams.
    public static func urlSession(
        configuration: URLSessionConfiguration = .ephemeral,
        connectionsPerHost: Int = 8,
        idleTimeout: Duration = .seconds(30)
    ) -> Transport {
        Transport(
            URLSessionTransport(
                configuration: configuration,
                connectionsPerHost: connectionsPerHost,
                idleTimeout: idleTimeout
            )
        )
    }
    #endif
}
