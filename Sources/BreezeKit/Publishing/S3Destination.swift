import AsyncHTTPClient
import Foundation
import FreshAir
import NIOCore
import NIOHTTP1

/// An S3 bucket, or any server that speaks S3's API (MinIO, Ceph, R2; `endpoint` names it and
/// path-style addressing is used). Requests are signed with Signature Version 4; each upload
/// is a single `PUT` whose payload hash S3 checks, so a damaged upload is refused, not stored.
package struct S3Destination: PublishDestination {
    package let bucket: String
    /// The key prefix, without leading or trailing `/`; empty for the bucket's root.
    package let prefix: String
    package let region: String
    /// An S3-compatible server; `nil` for AWS (`https://<bucket>.s3.<region>.amazonaws.com`).
    package let endpoint: URL?
    private let signer: S3RequestSigner

    /// The largest object one `PUT` may carry.
    static let singlePutLimit: Int64 = 5 << 30

    package init(bucket: String, prefix: String, region: String, endpoint: URL?, credentials: S3Credentials) {
        self.bucket = bucket
        self.prefix = prefix
        self.region = region
        self.endpoint = endpoint
        signer = S3RequestSigner(credentials: credentials, region: region)
    }

    package var description: String { "s3://\(bucket)" + (prefix.isEmpty ? "" : "/\(prefix)") }

    private func key(_ path: String) -> String { prefix.isEmpty ? path : "\(prefix)/\(path)" }

    /// Scheme and host, and the path of an object key: `/<bucket>/<key>` path-style on a
    /// custom endpoint, `/<key>` on `<bucket>.s3.<region>.amazonaws.com`.
    private func location(ofKey key: String) -> (base: String, host: String, path: String) {
        if let endpoint {
            let host = endpoint.host! + (endpoint.port.map { ":\($0)" } ?? "")
            let basePath = endpoint.path.hasSuffix("/") ? String(endpoint.path.dropLast()) : endpoint.path
            return ("\(endpoint.scheme!)://\(host)", host, "\(basePath)/\(bucket)" + (key.isEmpty ? "" : "/\(key)"))
        }
        let host = "\(bucket).s3.\(region).amazonaws.com"
        return ("https://\(host)", host, "/\(key)")
    }

    /// Sends one signed request and returns the status and body (error bodies are small XML).
    private func send(
        _ method: HTTPMethod,
        key: String,
        query: [(String, String)] = [],
        headers: [(String, String)] = [],
        body: HTTPClientRequest.Body? = nil,
        payloadHash: String = S3RequestSigner.emptyPayloadHash
    ) async throws -> (status: Int, body: String) {
        let (base, host, path) = location(ofKey: key)
        let signed = signer.sign(
            method: method.rawValue,
            path: path,
            query: query,
            headers: [("host", host)] + headers,
            payloadHash: payloadHash,
            date: Date()
        )
        let queryText = S3RequestSigner.canonicalQuery(query)
        var request = HTTPClientRequest(
            url: base + S3RequestSigner.encodePath(path) + (queryText.isEmpty ? "" : "?\(queryText)")
        )
        request.method = method
        for (name, value) in signed where name != "host" { request.headers.add(name: name, value: value) }
        if let body { request.body = body }
        let response: HTTPClientResponse
        // AsyncHTTPClient's process-wide client: pooled connections, nothing to shut down.
        do { response = try await HTTPClient.shared.execute(request, timeout: .seconds(300)) } catch {
            throw PublishError("\(method.rawValue) \(base)\(path): \(error); check the endpoint and the network")
        }
        let text = String(buffer: try await response.body.collect(upTo: 16 << 20))
        return (Int(response.status.code), text)
    }

    /// A failed request as one line: status, S3's error code and message, and a hint.
    /// `path` is relative to the destination.
    private func failure(_ method: String, _ path: String, _ status: Int, _ body: String) -> PublishError {
        let code = S3XML.values(of: "Code", in: body).first ?? "HTTP \(status)"
        let message = S3XML.values(of: "Message", in: body).first.map { ": \($0)" } ?? ""
        let hint =
            switch code {
            case "SignatureDoesNotMatch", "InvalidAccessKeyId": "; check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
            case "AccessDenied": "; the credentials may not write to this bucket"
            case "NoSuchBucket": "; create the bucket first, or check its name"
            case "AuthorizationHeaderMalformed", "PermanentRedirect": "; check --region"
            default: ""
            }
        return PublishError("\(method) \(description)/\(path) failed with \(status) \(code)\(message)\(hint)")
    }

    package func list() async throws -> [String: PublishedObject] {
        var objects: [String: PublishedObject] = [:]
        var token: String?
        let listPrefix = prefix.isEmpty ? "" : prefix + "/"
        repeat {
            // The prefix without its last `/` (keys are filtered below): moto's server, which the
            // tests use, mis-verifies signatures of query values that contain `/`.
            var query = [("list-type", "2"), ("prefix", prefix)]
            if let token { query.append(("continuation-token", token)) }
            let (status, body) = try await send(.GET, key: "", query: query)
            guard status == 200 else { throw failure("LIST", "", status, body) }
            for entry in S3XML.elements("Contents", in: body) {
                guard let key = S3XML.values(of: "Key", in: entry).first, key.hasPrefix(listPrefix),
                    let size = S3XML.values(of: "Size", in: entry).first.flatMap({ Int64($0) })
                else { continue }
                let etag = S3XML.values(of: "ETag", in: entry).first?.trimmingCharacters(
                    in: CharacterSet(charactersIn: "\"")
                )
                objects[String(key.dropFirst(listPrefix.count))] = PublishedObject(size: size, etag: etag)
            }
            token =
                S3XML.values(of: "IsTruncated", in: body).first == "true"
                ? S3XML.values(of: "NextContinuationToken", in: body).first : nil
        } while token != nil
        return objects
    }

    package func holds(_ file: LocalFile, as object: PublishedObject) async throws -> Bool {
        // A multipart ETag ("…-3") is not an MD5: such an object is simply uploaded again.
        guard object.size == file.size, let etag = object.etag, !etag.contains("-") else { return false }
        return etag.lowercased() == (try file.digests().md5)
    }

    package func upload(_ file: LocalFile, replacing existing: PublishedObject?) async throws {
        guard file.size <= Self.singlePutLimit else {
            throw PublishError("\(file.path) is \(file.size) bytes, above the 5 GiB a single S3 upload takes")
        }
        let digests = try file.digests()
        var headers = [("content-type", file.contentType), ("content-length", String(file.size))]
        // Devices and CDNs must ask again for the documents that name everything else.
        if file.isPointer { headers.append(("cache-control", "no-cache")) }
        let (status, body) = try await send(
            .PUT,
            key: key(file.path),
            headers: headers,
            body: .stream(FileChunks(handle: try FileHandle(forReadingFrom: file.url)), length: .known(file.size)),
            payloadHash: digests.sha256
        )
        guard status == 200 else { throw failure("PUT", file.path, status, body) }
    }

    package func delete(_ path: String) async throws {
        let (status, body) = try await send(.DELETE, key: key(path))
        guard status == 204 || status == 200 else { throw failure("DELETE", path, status, body) }
    }
}

/// A file's bytes as a stream of buffers, read as the upload asks for them.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    /// Opened by the caller, so an unreadable file fails before the request, not as an empty body.
    let handle: FileHandle

    struct AsyncIterator: AsyncIteratorProtocol {
        let handle: FileHandle
        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty else {
                try? handle.close()
                return nil
            }
            return ByteBuffer(bytes: chunk)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(handle: handle) }
}

/// Just enough XML for S3's answers: the text of named elements, entities decoded.
enum S3XML {
    /// The contents of every `<name>…</name>` in `text`, in order.
    static func elements(_ name: String, in text: String) -> [Substring] {
        var found: [Substring] = []
        var rest = text[...]
        while let open = rest.range(of: "<\(name)>"), let close = rest[open.upperBound...].range(of: "</\(name)>") {
            found.append(rest[open.upperBound..<close.lowerBound])
            rest = rest[close.upperBound...]
        }
        return found
    }

    static func values(of name: String, in text: some StringProtocol) -> [String] {
        elements(name, in: String(text)).map { decode(String($0)) }
    }

    static func decode(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var result = ""
        var rest = text[...]
        while let amp = rest.firstIndex(of: "&") {
            result += rest[..<amp]
            guard let semicolon = rest[amp...].firstIndex(of: ";") else { break }
            let entity = rest[rest.index(after: amp)..<semicolon]
            switch entity {
            case "amp": result += "&"
            case "lt": result += "<"
            case "gt": result += ">"
            case "quot": result += "\""
            case "apos": result += "'"
            default:
                let number =
                    entity.hasPrefix("#x")
                    ? UInt32(entity.dropFirst(2), radix: 16) : entity.hasPrefix("#") ? UInt32(entity.dropFirst()) : nil
                if let scalar = number.flatMap(Unicode.Scalar.init) {
                    result.unicodeScalars.append(scalar)
                } else {
                    result += "&\(entity);"
                }
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }
}
