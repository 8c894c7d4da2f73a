import AsyncHTTPClient
import Crypto
package import Foundation
import FreshAir
import NIOHTTP1

/// An S3 bucket, or any server that speaks S3's API (Ceph's radosgw, MinIO, R2; `endpoint`
/// names it and path-style addressing is used). Requests are signed with Signature Version 4
/// and carry their payload's SHA-256, which S3 checks, so a damaged upload is refused, not
/// stored. A file up to ``S3Options/partSize`` goes up in one `PUT`; a larger one as a
/// multipart upload (``S3MultipartUpload``), resumed by the next publish if this one is killed.
package struct S3Destination: PublishDestination {
    let client: S3Client
    /// The key prefix, without leading or trailing `/`; empty for the bucket's root.
    package let prefix: String

    init(client: S3Client, prefix: String) {
        self.client = client
        self.prefix = prefix
    }

    package var bucket: String { client.bucket }
    package var options: S3Options { client.options }

    package var description: String { "s3://\(bucket)" + (prefix.isEmpty ? "" : "/\(prefix)") }

    func key(_ path: String) -> String { prefix.isEmpty ? path : "\(prefix)/\(path)" }

    /// A failed request as one line: status, S3's error code and message, and a hint.
    /// `path` is relative to the destination.
    func failure(_ method: String, _ path: String, _ response: S3Client.Response) -> PublishError {
        let code = response.code ?? "HTTP \(response.status)"
        let message = S3XML.values(of: "Message", in: response.body).first.flatMap { $0.isEmpty ? nil : ": \($0)" }
        let hint =
            switch code {
            case "SignatureDoesNotMatch", "InvalidAccessKeyId":
                "; check the credentials, from \(client.signer.credentials.source)"
            case "AccessDenied": "; the credentials may not write to this bucket"
            case "NoSuchBucket": "; check its name, or create it: --create-bucket makes it first"
            case "AuthorizationHeaderMalformed", "PermanentRedirect": "; check --region"
            case "SlowDown", "ServiceUnavailable", "InternalError":
                "; S3 kept asking to slow down or failing after \(options.attempts) attempts: publish again later"
            // A body with no S3 error in it (a web server's page): whatever answered is not an S3 API.
            case _ where response.code == nil && response.status >= 400 && !response.body.isEmpty:
                "; the answer is not S3's (no S3 error in it): check that \(client.endpoint?.absoluteString ?? "the endpoint") is an S3-compatible API, not a web server"
            default: ""
            }
        let kind: PublishError.Kind =
            ["SignatureDoesNotMatch", "InvalidAccessKeyId", "AuthorizationHeaderMalformed", "PermanentRedirect"]
                .contains(code) ? .configuration : .server
        return PublishError(
            "\(method) \(description)/\(path) failed with \(response.code.map { "\(response.status) \($0)" } ?? code)\(message ?? "")\(hint)",
            kind: kind
        )
    }

    package func list() async throws -> [String: PublishedObject] {
        var objects: [String: PublishedObject] = [:]
        let entries = try await listEntries(
            "Contents",
            query: [("list-type", "2")],
            paging: [("continuation-token", "NextContinuationToken")]
        )
        for entry in entries {
            guard let key = S3XML.values(of: "Key", in: entry).first, let path = relative(key),
                let size = S3XML.values(of: "Size", in: entry).first.flatMap({ Int64($0) })
            else { continue }
            let etag = S3XML.values(of: "ETag", in: entry).first?.trimmingCharacters(
                in: CharacterSet(charactersIn: "\"")
            )
            let modified = S3XML.values(of: "LastModified", in: entry).first.flatMap(Self.date)
            objects[path] = PublishedObject(size: size, etag: etag, modified: modified)
        }
        return objects
    }

    /// S3's `LastModified` (ISO 8601, with or without milliseconds).
    static func date(_ text: String) -> Date? {
        let withFraction = ISO8601DateFormatter()
        withFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return withFraction.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }

    package func read(_ path: String) async throws -> Data? {
        let response = try await client.send(.GET, key: key(path), what: "GET \(description)/\(path)")
        if response.status == 404 { return nil }
        guard response.status == 200 else { throw failure("GET", path, response) }
        return Data(response.body.utf8)
    }

    package func readTagged(_ path: String) async throws -> TaggedObject? {
        let response = try await client.send(.GET, key: key(path), what: "GET \(description)/\(path)")
        if response.status == 404 { return nil }
        guard response.status == 200 else { throw failure("GET", path, response) }
        guard let etag = response.headers.first(name: "etag"), !etag.isEmpty else {
            throw PublishError(
                "GET \(description)/\(path) answered without an ETag, which a release needs to replace it safely: "
                    + "is this an S3 server?",
                kind: .server
            )
        }
        return TaggedObject(data: Data(response.body.utf8), tag: etag)
    }

    /// One `PUT` with `If-Match` (or `If-None-Match: *` where nothing was), which S3 (since
    /// 2024) and Ceph's radosgw refuse with `412` once the object changed. A `412` is checked
    /// before it is called a conflict:
    /// - the object unchanged: the server compares the tag without its quotes (radosgw 16),
    ///   so the `PUT` is sent again with the bare tag;
    /// - the object holding these very bytes: a retried `PUT` whose first answer was lost.
    package func swap(_ file: LocalFile, expecting expected: String?) async throws -> Int64 {
        let digests = try file.digests()
        func put(_ condition: (String, String)) async throws -> S3Client.Response {
            try await client.send(
                .PUT,
                key: key(file.path),
                headers: objectHeaders(for: file, sha256: digests.sha256) + [
                    ("content-length", String(file.size)), condition,
                ],
                payload: .file(file.url, offset: 0, length: file.size, sha256: digests.sha256),
                what: "PUT \(description)/\(file.path)"
            )
        }
        var response = try await put(expected.map { ("if-match", $0) } ?? ("if-none-match", "*"))
        if response.status == 412, let expected {
            let bare = expected.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            if bare != expected, try await readTagged(file.path)?.tag == expected {
                response = try await put(("if-match", bare))
            }
        }
        if response.status == 200 { return file.size }
        guard response.status == 412 || response.code == "ConditionalRequestConflict" else {
            throw failure("PUT", file.path, response)
        }
        if let now = try await readTagged(file.path), now.data == (try Data(contentsOf: file.url)) { return file.size }
        throw PublishError("\(description)/\(file.path) changed since this release read it", kind: .conflict)
    }

    package func located(at path: String) throws -> any PublishDestination {
        var segments = prefix.split(separator: "/").map(String.init)
        for segment in path.split(separator: "/") where segment != "." {
            if segment == ".." {
                guard !segments.isEmpty else {
                    throw PublishError("\(path) climbs above the bucket \(bucket)", kind: .configuration)
                }
                segments.removeLast()
            } else {
                segments.append(String(segment))
            }
        }
        return S3Destination(client: client, prefix: segments.joined(separator: "/"))
    }

    /// The path under the prefix of `key`, or `nil` for a key outside it.
    func relative(_ key: String) -> String? {
        let listPrefix = prefix.isEmpty ? "" : prefix + "/"
        return key.hasPrefix(listPrefix) ? String(key.dropFirst(listPrefix.count)) : nil
    }

    /// Every `<element>` of a paged listing: of the bucket under the prefix, or of an object
    /// `key`'s parts. `paging` names each query parameter that asks for the next page and the
    /// element of an answer that gives its value. The prefix is sent without its last `/` (the
    /// caller filters keys): moto's server mis-verifies signatures of query values holding `/`.
    func listEntries(
        _ element: String,
        key: String = "",
        query: [(String, String)],
        paging: [(parameter: String, element: String)]
    ) async throws -> [Substring] {
        var entries: [Substring] = []
        var next: [(String, String)] = []
        repeat {
            let response = try await client.send(
                .GET,
                key: key,
                query: query + (key.isEmpty ? [("prefix", prefix)] : []) + next,
                what: "LIST \(description)"
            )
            guard response.status == 200 else { throw failure("LIST", "", response) }
            entries += S3XML.elements(element, in: response.body)
            let truncated = S3XML.values(of: "IsTruncated", in: response.body).first == "true"
            next =
                truncated
                ? paging.compactMap { page in
                    S3XML.values(of: page.element, in: response.body).first.map { (page.parameter, $0) }
                } : []
        } while !next.isEmpty
        return entries
    }

    package func holds(_ file: LocalFile, as object: PublishedObject) async throws -> Bool {
        guard object.size == file.size, let etag = object.etag?.lowercased() else { return false }
        guard let dash = etag.firstIndex(of: "-"), let parts = Int(etag[etag.index(after: dash)...]) else {
            return etag == (try file.digests().md5)  // one PUT: the ETag is the bytes' MD5
        }
        // A multipart upload's ETag is the MD5 of its parts' MD5s: it matches when the part
        // size is guessed right (ours, or a common tool's); else the SHA-256 breeze stores.
        if try S3MultipartUpload.etags(of: file, parts: parts, candidates: [options.partSize]).contains(etag) {
            return true
        }
        let head = try await client.send(.HEAD, key: key(file.path), what: "HEAD \(description)/\(file.path)")
        guard head.status == 200, let stored = head.headers.first(name: S3MultipartUpload.sha256Header) else {
            return false
        }
        return stored == (try file.digests().sha256)
    }

    /// The headers every new object gets: type, caching, the SHA-256 breeze compares by, an ACL.
    func objectHeaders(for file: LocalFile, sha256: String) -> [(String, String)] {
        var headers = [
            ("content-type", file.contentType),
            ("cache-control", file.cacheControl(options.cachePolicy)),
            (S3MultipartUpload.sha256Header, sha256),
        ]
        if let acl = options.acl { headers.append(("x-amz-acl", acl)) }
        return headers
    }

    package func upload(_ file: LocalFile, replacing existing: PublishedObject?) async throws -> Int64 {
        let digests = try file.digests()
        guard file.size > options.partSize else {
            let response = try await client.send(
                .PUT,
                key: key(file.path),
                headers: objectHeaders(for: file, sha256: digests.sha256) + [("content-length", String(file.size))],
                payload: .file(file.url, offset: 0, length: file.size, sha256: digests.sha256),
                what: "PUT \(description)/\(file.path)"
            )
            guard response.status == 200 else { throw failure("PUT", file.path, response) }
            return file.size
        }
        return try await S3MultipartUpload(destination: self, file: file, sha256: digests.sha256).run()
    }

    package func delete(_ path: String) async throws {
        let response = try await client.send(.DELETE, key: key(path), what: "DELETE \(description)/\(path)")
        guard response.status == 204 || response.status == 200 else { throw failure("DELETE", path, response) }
    }

    /// With a public `--acl`, asks without credentials for the first unchanged object, as a
    /// device would; refused, every unchanged object gets the ACL (one request each). One
    /// request when they are readable already.
    package func grantAccess(to unchanged: [String]) async throws -> Int {
        guard let acl = options.acl, acl.hasPrefix("public-read"), let first = unchanged.first else { return 0 }
        // A probe that fails (the network, after the uploads went up) changes nothing.
        guard (try? await client.anonymousStatus(ofKey: key(first))) == 403 else { return 0 }
        _ = try await Publisher.inParallel(unchanged.indices, width: 8) { index in
            let path = unchanged[index]
            let response = try await client.send(
                .PUT,
                key: key(path),
                query: [("acl", "")],
                headers: [("x-amz-acl", acl)],
                what: "PUT \(description)/\(path)?acl"
            )
            guard response.status == 200 else { throw failure("PUT (ACL)", path, response) }
        }
        return unchanged.count
    }

    /// Makes the bucket (a new Ceph or MinIO server has none); one that exists and is ours is fine.
    /// On AWS outside us-east-1 the request names the region, as S3 requires.
    package func createBucket() async throws {
        let location =
            client.endpoint == nil && client.region != "us-east-1"
            ? Array(
                "<CreateBucketConfiguration><LocationConstraint>\(client.region)</LocationConstraint></CreateBucketConfiguration>"
                    .utf8
            ) : nil
        let response = try await client.send(
            .PUT,
            key: "",
            payload: location.map { .bytes($0) },
            what: "PUT s3://\(bucket)"
        )
        guard response.status == 200 || response.code == "BucketAlreadyOwnedByYou" else {
            throw failure("PUT (create bucket)", "", response)
        }
    }
}
