import AsyncHTTPClient
import Crypto
package import Foundation
import FreshAir
import FreshAirAsyncHTTPClient

/// Where `breeze publish` puts content: a folder a web server serves (``FolderDestination``)
/// or an S3 bucket (``S3Destination``). Paths are relative to the destination's root, `/`-separated.
package protocol PublishDestination: Sendable, CustomStringConvertible {
    /// What is there now.
    func list() async throws -> [String: PublishedObject]
    /// Whether `object` already holds exactly `file`'s bytes.
    func holds(_ file: LocalFile, as object: PublishedObject) async throws -> Bool
    /// Puts `file` at its path, whole: a reader sees the old bytes or the new, never part.
    /// Returns the bytes sent, fewer than the file's when an interrupted upload was resumed.
    func upload(_ file: LocalFile, replacing existing: PublishedObject?) async throws -> Int64
    func delete(_ path: String) async throws
    /// The bytes at `path`, or `nil` when there is nothing there.
    func read(_ path: String) async throws -> Data?
    /// The bytes at `path` with a tag that changes whenever they do (S3's `ETag`; a folder's:
    /// their SHA-256), or `nil` when there is nothing there. What ``swap(_:expecting:)`` compares.
    func readTagged(_ path: String) async throws -> TaggedObject?
    /// Puts `file` at its path only while that path still holds what `expected` tagged
    /// (`nil`: nothing there), in one step no other writer can come between: a release's root.
    ///
    /// - Throws: ``PublishError`` of kind ``PublishError/Kind/conflict`` when another write
    ///   got there first; nothing is written then.
    func swap(_ file: LocalFile, expecting expected: String?) async throws -> Int64
    /// The destination at `path` relative to this one (`objects`, `../objects`), on the same
    /// server with the same credentials.
    ///
    /// - Throws: ``PublishError`` when `path` climbs above the bucket's or the file system's root.
    func located(at path: String) throws -> any PublishDestination
    /// Makes files already there, and not uploaded again, readable as an upload now would be,
    /// when they are not: S3 objects uploaded before `--acl public-read` was given keep their
    /// private ACL, and a device is refused them. Answers how many were changed.
    func grantAccess(to unchanged: [String]) async throws -> Int
}

extension PublishDestination {
    /// A served folder's files are as readable as the server makes them.
    package func grantAccess(to unchanged: [String]) async throws -> Int { 0 }

    /// Puts `data` at `path` through a temporary file, like any other upload.
    func upload(
        _ data: Data,
        at path: String,
        immutable: Bool = false,
        replacing existing: PublishedObject?
    )
        async throws
    {
        _ = try await LocalFile.holding(data, at: path, immutable: immutable) {
            try await upload($0, replacing: existing)
        }
    }
}

/// An object's bytes and the tag its destination gives them (see ``PublishDestination/readTagged(_:)``).
package struct TaggedObject: Sendable, Equatable {
    package var data: Data
    package var tag: String

    package init(data: Data, tag: String) {
        self.data = data
        self.tag = tag
    }
}

/// A file already at the destination.
package struct PublishedObject: Sendable, Hashable {
    /// Its size in bytes.
    package var size: Int64
    /// S3's `ETag` (the MD5 of the bytes for a single-part upload); `nil` for a folder.
    package var etag: String?
    /// When it was last written (folders), used to keep validators moving forward.
    package var modified: Date?

    package init(size: Int64, etag: String? = nil, modified: Date? = nil) {
        self.size = size
        self.etag = etag
        self.modified = modified
    }
}

/// A file to publish.
package struct LocalFile: Sendable {
    /// Relative to the destination's root.
    package var path: String
    /// Where it is on this machine.
    package var url: URL
    package var size: Int64
    /// Named by its bytes (an object of the object layout): never overwritten with other bytes,
    /// so caches may keep it for ever.
    package var isImmutable = false

    package init(path: String, url: URL, size: Int64, isImmutable: Bool = false) {
        self.path = path
        self.url = url
        self.size = size
        self.isImmutable = isImmutable
    }

    /// Runs `body` with `data` as a file to publish at `path`, in a temporary file removed after.
    static func holding<Result>(
        _ data: Data,
        at path: String,
        immutable: Bool = false,
        _ body: (LocalFile) async throws -> Result
    ) async throws -> Result {
        let temporary = FileManager.default.temporaryDirectory
            .appendingPathComponent("breeze-\(UUID().uuidString)-\(path.split(separator: "/").last ?? "file")")
        try data.write(to: temporary)
        defer { try? FileManager.default.removeItem(at: temporary) }
        return try await body(LocalFile(path: path, url: temporary, size: Int64(data.count), isImmutable: immutable))
    }

    /// `manifest.json`, `index.json` and a package's `.sig` name other files, so they go up after what they name,
    /// deepest first, and caches are told to revalidate them.
    package var isPointer: Bool { CachePolicy.isDocument(path) }

    /// SHA-256 (hex, S3's payload hash) and MD5 (hex, S3's `ETag`), in one pass over the file.
    func digests() throws -> (sha256: String, md5: String) {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var sha = SHA256()
        var md5 = Insecure.MD5()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            sha.update(data: chunk)
            md5.update(data: chunk)
        }
        return (S3RequestSigner.hex(sha.finalize()), S3RequestSigner.hex(md5.finalize()))
    }

    /// The `Cache-Control` it is published with under `policy`.
    func cacheControl(_ policy: CachePolicy) -> String {
        isImmutable ? policy.immutable : policy.cacheControl(for: path)
    }

    /// The `Content-Type` a browser or app expects for the file.
    var contentType: String {
        switch url.pathExtension.lowercased() {
        case "json": return "application/json"
        case "md": return "text/markdown; charset=utf-8"
        case "txt": return "text/plain; charset=utf-8"
        case "html", "htm": return "text/html; charset=utf-8"
        case "css": return "text/css"
        case "js": return "text/javascript"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "svg": return "image/svg+xml"
        case "pdf": return "application/pdf"
        case "gz", "tgz": return "application/gzip"
        case "zip": return "application/zip"
        case "tar": return "application/x-tar"
        default: return "application/octet-stream"
        }
    }
}

/// Reads a destination as the command line names it.
package enum PublishDestinations {
    /// A destination that starts like a URL (`s3:/bucket`, `S3://bucket`, `https://…`) is a
    /// mistake, not a folder named `s3:` in the current one: publishing there would exit 0 and
    /// leave the bucket as it was.
    static func refuseMistypedURL(_ text: String) throws {
        guard let colon = text.firstIndex(of: ":") else { return }
        let scheme = text[..<colon]
        guard let first = scheme.first, first.isLetter,
            scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) })
        else { return }
        let hint =
            scheme.lowercased() == "s3"
            ? "an S3 destination is written s3://BUCKET/PREFIX"
            : "breeze publishes to s3://BUCKET/PREFIX or to a folder; a web server's folder is given by its path"
        throw PublishError(
            "\"\(text)\" looks like a mistyped URL: \(hint) (for a folder whose name has a colon, write ./\(text))",
            kind: .configuration
        )
    }

    /// The folder (or prefix) a package is published into, from a destination that may name the
    /// package itself: `site/content.tgz` for `content.tgz`, as a bundle's destination names its
    /// folder, is `site/`. It was published as `site/content.tgz/content.tgz`, a URL nobody
    /// expected. A destination that names another archive is refused: a package keeps its
    /// name, as its signed document and chunk index are found beside it by that name.
    package static func folder(for text: String, publishing source: URL) throws -> String {
        var isFolder: ObjCBool = false
        let name = source.lastPathComponent
        guard ArchiveFormat(fileName: name) != nil,
            FileManager.default.fileExists(atPath: source.path, isDirectory: &isFolder), !isFolder.boolValue
        else { return text }
        var trimmed = Substring(text)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        let last = String(trimmed.split(separator: "/", omittingEmptySubsequences: false).last ?? "")
        let parent = trimmed.dropLast(last.count)
        if last == name, parent != "s3://" {
            return parent.isEmpty ? "." : String(parent)
        }
        if last != name, ArchiveFormat(fileName: last) != nil, parent != "s3://" {
            throw PublishError(
                "\(text) names a package file, but a package is published into a folder under its own name: give \(parent.isEmpty ? "." : String(parent)) to publish \(parent)\(name). To publish it as \(last), name the package so (or link it: ln -s \(name) \(last))",
                kind: .configuration
            )
        }
        return text
    }

    /// Runs `body` with the destination `text` names: `s3://bucket/prefix` (region from
    /// `region`, `AWS_REGION`, `AWS_DEFAULT_REGION` or the AWS profile's config; an
    /// S3-compatible server from `endpoint`, `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, the `s3`
    /// block of the profile's `services` section, or the profile's `endpoint_url` (the AWS
    /// CLI's order); credentials as the AWS CLI finds them, ``AWSProfile``), or a
    /// folder path. An S3 destination's connections are its own and closed when `body`
    /// returns or throws.
    package static func with<Result>(
        _ text: String,
        endpoint: String? = nil,
        region: String? = nil,
        profile: String? = nil,
        options: S3Options = S3Options(),
        environment: [String: String] = ProcessInfo.processInfo.environment,
        _ body: (any PublishDestination) async throws -> Result
    ) async throws -> Result {
        guard text.hasPrefix("s3://") else {
            try refuseMistypedURL(text)
            return try await body(FolderDestination(root: URL(fileURLWithPath: text)))
        }
        let rest = text.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        guard !bucket.isEmpty else {
            throw PublishError("\(text): name a bucket, as in s3://bucket/prefix", kind: .configuration)
        }
        let prefix = rest.dropFirst(bucket.count).trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        let awsProfile = AWSProfile.load(named: profile, environment: environment)
        let region =
            region ?? environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"] ?? awsProfile.region ?? "us-east-1"
        let endpointText =
            endpoint ?? environment["AWS_ENDPOINT_URL_S3"] ?? environment["AWS_ENDPOINT_URL"] ?? awsProfile
            .s3EndpointURL
            ?? awsProfile.endpointURL
        var endpointURL: URL?
        if let endpointText {
            guard let url = URL(string: endpointText), url.scheme == "http" || url.scheme == "https", url.host != nil
            else {
                throw PublishError("the endpoint \(endpointText) is not an http(s) URL", kind: .configuration)
            }
            endpointURL = url
        }
        guard options.partSize >= S3Options.minimumPartSize else {
            throw PublishError("the part size must be at least 5 MiB, as S3 requires", kind: .configuration)
        }
        let credentials = try S3Credentials.fromEnvironment(environment, profile: awsProfile)
        let http = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: AsyncHTTPClientTransport.configuration(
                connectionsPerHost: 16,
                connectTimeout: options.connectTimeout,
                idleTimeout: options.idleTimeout
            )
        )
        let destination = S3Destination(
            client: S3Client(
                http: http,
                bucket: bucket,
                region: region,
                endpoint: endpointURL,
                signer: S3RequestSigner(credentials: credentials, region: region),
                options: options
            ),
            prefix: prefix
        )
        let result: Result
        do {
            if options.createsBucket { try await destination.createBucket() }
            result = try await body(destination)
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
        return result
    }
}
