import BreezeKit
import Foundation
import FreshAir

/// The two real servers every sync scenario runs against.
enum ServerKind: String, CaseIterable, CustomStringConvertible, Sendable {
    case nginx
    case breezeServe

    var description: String { rawValue }
}

/// A folder published by a real server on loopback, and what that server was asked.
final class PublishedFolder: @unchecked Sendable {
    let folder: TemporaryFolder
    let kind: ServerKind
    let url: URL
    private let nginx: Nginx?
    private let running: RunningServer?
    private let exchanges = ExchangeLog()

    var root: URL { folder.url }

    private init(kind: ServerKind, folder: TemporaryFolder, url: URL, nginx: Nginx?, running: RunningServer?) {
        self.kind = kind
        self.folder = folder
        self.url = url
        self.nginx = nginx
        self.running = running
    }

    static func start(_ kind: ServerKind) async throws -> PublishedFolder {
        let folder = try TemporaryFolder("published")
        switch kind {
        case .nginx:
            let nginx = try Nginx(serving: folder.url)
            return PublishedFolder(kind: kind, folder: folder, url: nginx.url, nginx: nginx, running: nil)
        case .breezeServe:
            let log = ExchangeLog()
            let running = try await StaticFileServer(root: folder.url).start(onRequest: log.record)
            let published = PublishedFolder(kind: kind, folder: folder, url: running.url, nginx: nil, running: running)
            published.exchangeLog = log
            return published
        }
    }

    private var exchangeLog: ExchangeLog?

    /// (status, path) of every request so far, from nginx's access log or breeze's own.
    func requests() -> [(status: Int, path: String)] {
        if let nginx { return nginx.requests().map { ($0.status, $0.path) } }
        return exchangeLog?.all.map { ($0.status, $0.path) } ?? []
    }

    /// nginx's detailed log (body bytes, ranges); empty for breeze serve.
    func nginxRequests() -> [Nginx.Request] { nginx?.requests() ?? [] }

    func stop() async {
        nginx?.stop()
        await running?.stop()
    }

    /// Runs `body` with a folder published by `kind`, stopping the server however it ends.
    static func with<Result>(
        _ kind: ServerKind,
        _ body: (PublishedFolder) async throws -> Result
    ) async throws -> Result {
        let server = try await start(kind)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }
}

/// A sync of the example bundle from `published` into a fresh local folder.
struct ExampleClient {
    let local: TemporaryFolder
    var sync: BundleSync

    var live: URL { local.path("live") }

    init(published: PublishedFolder, appVersion: String = "0.9", path: String = ExampleBundle.name) throws {
        local = try TemporaryFolder("client")
        let store = BundleStore(root: local.path("store"), liveLink: local.path("live"))
        var configuration = SyncConfiguration()
        configuration.retry = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(10))
        sync = BundleSync(
            remote: published.url.appendingPathComponent(path + "/"),
            store: store,
            environment: ExampleBundle.environment(appVersion: appVersion),
            configuration: configuration
        )
    }

    /// Whether the live folder is the example as an app before 1.0 gets it: Embed1's files,
    /// bar.md as published.
    var hasEmbed1: Bool {
        liveFiles() == [
            "Embed1.freshair/bar.md", "Embed1.freshair/foo.md", "Embed1.freshair/manifest.json", "manifest.json",
        ]
            && live.appendingPathComponent("Embed1.freshair/bar.md").text
                == ExampleBundle.contents["Embed1.freshair/bar.md"]
    }

    /// Relative paths of the files in the live folder, sorted.
    func liveFiles() -> [String] {
        let root = live.resolvingSymlinksInPath()
        let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        var files: [String] = []
        while let url = walker?.nextObject() as? URL {
            if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                files.append(String(url.resolvingSymlinksInPath().path.dropFirst(root.path.count + 1)))
            }
        }
        return files.sorted()
    }
}

/// A device syncing `url` into `local` (store and live link), retrying once quickly.
func testDevice(
    _ url: URL,
    in local: TemporaryFolder,
    environment: ConditionEnvironment = ExampleBundle.environment(appVersion: "0.9"),
    configure: (inout SyncConfiguration) -> Void = { _ in }
) -> BundleSync {
    var configuration = SyncConfiguration()
    configuration.retry = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(10))
    configure(&configuration)
    return BundleSync(
        remote: url,
        store: BundleStore(root: local.path("store"), liveLink: local.path("live")),
        environment: environment,
        configuration: configuration
    )
}

/// A device keeping the package at `url` installed into `local` (store and live link),
/// trusting only `key`, with no retries: what a signed package's tests need.
func signedPackageDevice(
    _ url: URL,
    trusting key: SigningKey,
    in local: TemporaryFolder,
    transport: (any HTTPTransport)? = nil
) -> PackageUpdater {
    var configuration = SyncConfiguration()
    configuration.retry = RetryPolicy(maxAttempts: 1)
    configuration.trustedKeys = [key.publicKey]
    return PackageUpdater(
        remote: url,
        store: BundleStore(root: local.path("store"), liveLink: local.path("live")),
        transport: transport,
        configuration: configuration
    )
}
