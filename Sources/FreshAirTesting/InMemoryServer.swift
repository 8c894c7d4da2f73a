public import Foundation
public import FreshAir
import Synchronization

/// A static host in memory, for testing an app's use of FreshAir without a server.
///
/// It answers as nginx or S3 answer for static files: `ETag` and `Last-Modified` on every
/// file, `304` to `If-None-Match` or `If-Modified-Since`, `206` to `Range` (with `If-Range`),
/// `404` for what is not there. Publish what a test needs, hand ``transport`` to the code under
/// test, and read ``requests`` to see what it asked:
///
/// ```swift
/// let server = InMemoryServer()
/// try server.publish(folder: fixtures.appendingPathComponent("App.freshair"), at: "App.freshair")
/// let content = FreshAirContent(remote: server.url("App.freshair/"), folder: temporary,
///                               bundledIn: nil, transport: server.transport)
/// try await content.run()
/// #expect(server.requests.last?.status == 200)
/// try await content.run()
/// #expect(server.requests.last?.status == 304)   // nothing changed: one conditional request
/// ```
///
/// Faults a device meets are one call away: ``answer(_:with:)`` (a `503`, a `500`),
/// ``cut(_:after:)`` (a connection reset mid-body, which the next sync resumes with `Range`), and
/// ``isOffline``. Each publish moves the server's clock on by a second, as a real server's
/// one-second `Last-Modified` would, so a change is always seen as one.
public final class InMemoryServer: Sendable {
    /// One request as the server saw it.
    public struct Request: Sendable, Equatable {
        /// The path asked for, without the leading `/`.
        public var path: String
        /// The status answered; `nil` when the request failed below HTTP (offline, cut).
        public var status: Int?
        /// Whether it was conditional (`If-None-Match` or `If-Modified-Since`).
        public var conditional: Bool
        /// The `Range` header, when there was one.
        public var range: String?

        /// A request as a test expects to find it in ``InMemoryServer/requests``.
        public init(path: String, status: Int?, conditional: Bool, range: String? = nil) {
            (self.path, self.status, self.conditional, self.range) = (path, status, conditional, range)
        }
    }

    private struct File {
        var data: Data
        var etag: String
        var lastModified: String
    }

    private struct State {
        var files: [String: File] = [:]
        var statuses: [String: Int] = [:]
        var cuts: [String: Int] = [:]
        var offline = false
        var requests: [Request] = []
        var clock = Date(timeIntervalSince1970: 1_800_000_000)
    }

    /// Where the server's files appear: `https://content.test/` unless you say otherwise.
    public let baseURL: URL
    private let state = Mutex(State())

    /// A server with nothing published.
    public init(baseURL: URL = URL(string: "https://content.test/")!) {
        self.baseURL = baseURL.absoluteString.hasSuffix("/") ? baseURL : baseURL.appendingPathComponent("")
    }

    /// The transport to give ``FreshAirContent``, ``BundleSync``, ``PackageUpdater`` or
    /// ``Repository``: it answers from this server alone.
    public var transport: Transport { Transport(InMemoryTransport(server: self)) }

    /// The URL of `path` on this server.
    public func url(_ path: String) -> URL {
        URL(string: path, relativeTo: baseURL)!.absoluteURL
    }

    /// Every request so far, in order.
    public var requests: [Request] { state.withLock { $0.requests } }

    /// Puts `data` at `path` (`App.freshair/manifest.json`), replacing what was there.
    public func publish(_ data: Data, at path: String) {
        state.withLock { state in
            state.clock += 1
            let digest = ContentHash.of(data, using: .sha256).hex
            state.files[Self.normalized(path)] = File(
                data: data,
                etag: "\"\(digest.prefix(16))\"",
                lastModified: HTTPDate.format(state.clock)
            )
        }
    }

    /// Puts every regular file under `folder` (a bundle made with `breeze`, a package, a
    /// repository) at `path`, keeping their relative paths.
    public func publish(folder: URL, at path: String) throws {
        let prefix = Self.normalized(path)
        let root = folder.standardizedFileURL.resolvingSymlinksInPath()
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: folder.path])
        }
        for case let url as URL in walker
        where (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true {
            let relative = String(url.standardizedFileURL.resolvingSymlinksInPath().path.dropFirst(root.path.count + 1))
            publish(try Data(contentsOf: url), at: prefix.isEmpty ? relative : prefix + "/" + relative)
        }
    }

    /// Removes what is at `path`, or every file under it when it names a folder.
    public func remove(_ path: String) {
        let path = Self.normalized(path)
        state.withLock { state in
            for key in state.files.keys where key == path || key.hasPrefix(path + "/") { state.files[key] = nil }
        }
    }

    /// Answers every request for `path` with `status` (`503`, `500`, `403`) until set to `nil`.
    public func answer(_ path: String, with status: Int?) {
        state.withLock { $0.statuses[Self.normalized(path)] = status }
    }

    /// Resets the connection after `bytes` bytes of `path`'s body, once.
    public func cut(_ path: String, after bytes: Int) {
        state.withLock { $0.cuts[Self.normalized(path)] = bytes }
    }

    /// While `true`, every request fails to connect, as with no network.
    public var isOffline: Bool {
        get { state.withLock { $0.offline } }
        set { state.withLock { $0.offline = newValue } }
    }

    private static func normalized(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
    }

    /// The answer to a GET of `url` with `headers`, decided and logged under the lock.
    func answer(
        _ url: URL,
        headers: [(name: String, value: String)]
    ) -> Result<(status: Int, headers: [(name: String, value: String)], body: Data, cutAfter: Int?), TransportError> {
        let header = { (name: String) in headers.first { $0.name.lowercased() == name.lowercased() }?.value }
        let base = baseURL.absoluteString
        let text = url.absoluteString
        let path = text.hasPrefix(base) ? Self.normalized(String(text.dropFirst(base.count))) : "\u{0}"
        return state.withLock { state in
            let conditional = header("If-None-Match") != nil || header("If-Modified-Since") != nil
            var request = Request(path: path, status: nil, conditional: conditional, range: header("Range"))
            defer { state.requests.append(request) }
            if state.offline {
                return .failure(TransportError(kind: .connect, url: url, detail: "the in-memory server is offline"))
            }
            if let status = state.statuses[path] {
                request.status = status
                return .success((status, status == 503 ? [("Retry-After", "1")] : [], Data(), nil))
            }
            guard let file = state.files[path] else {
                request.status = 404
                return .success((404, [], Data("not found".utf8), nil))
            }
            let validators = [("ETag", file.etag), ("Last-Modified", file.lastModified)]
            if let tags = header("If-None-Match") {
                if tags.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == file.etag })
                {
                    request.status = 304
                    return .success((304, validators, Data(), nil))
                }
            } else if let since = header("If-Modified-Since"), since == file.lastModified {
                request.status = 304
                return .success((304, validators, Data(), nil))
            }
            let cut = state.cuts.removeValue(forKey: path)
            if let range = header("Range"), let start = Self.rangeStart(range), start < file.data.count,
                header("If-Range").map({ $0 == file.etag || $0 == file.lastModified }) ?? true
            {
                request.status = 206
                let body = file.data.dropFirst(start)
                let headers =
                    validators + [
                        ("Content-Length", String(body.count)),
                        ("Content-Range", "bytes \(start)-\(file.data.count - 1)/\(file.data.count)"),
                    ]
                return .success((206, headers, Data(body), cut))
            }
            request.status = 200
            return .success((200, validators + [("Content-Length", String(file.data.count))], file.data, cut))
        }
    }

    /// `N` in `bytes=N-`; other forms are answered whole, as a server may.
    private static func rangeStart(_ range: String) -> Int? {
        guard range.hasPrefix("bytes="), range.hasSuffix("-") else { return nil }
        return Int(range.dropFirst("bytes=".count).dropLast())
    }
}
