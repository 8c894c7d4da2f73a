import Crypto
import Foundation
import FreshAir
import NIOHTTP1

/// One file too large for a single `PUT`, uploaded in parts, several at once.
///
/// A publish that is killed leaves its parts on the server: the next publish of the same
/// file finds that upload, keeps every part whose size and MD5 match the file's bytes, sends
/// the rest and completes it. Uploads of the key that do not match (the file changed since)
/// are aborted, so no orphaned parts are left to be billed. A publish that fails on the
/// server's word aborts its own upload; one that lost the network keeps it for the next.
struct S3MultipartUpload {
    /// The object metadata holding the file's SHA-256, which breeze compares a multipart
    /// object by when its ETag (an MD5 of part MD5s) cannot be recomputed.
    static let sha256Header = "x-amz-meta-sha256"

    let destination: S3Destination
    let file: LocalFile
    let sha256: String

    private var client: S3Client { destination.client }
    private var key: String { destination.key(file.path) }
    private var name: String { "\(destination.description)/\(file.path)" }

    /// A byte range of the file, numbered from 1 as S3 numbers parts.
    struct Part: Sendable {
        var number: Int
        var offset: Int64
        var length: Int64
    }

    /// The part size for `size` bytes: `preferred`, grown (in whole MiB) to fit 10,000 parts.
    static func partSize(for size: Int64, preferred: Int64) -> Int64 {
        let needed = (size + S3Options.maximumParts - 1) / S3Options.maximumParts
        guard needed > preferred else { return preferred }
        return Self.wholeMiB(needed)
    }

    /// `bytes` rounded up to whole MiB.
    static func wholeMiB(_ bytes: Int64) -> Int64 { ((bytes + (1 << 20) - 1) >> 20) << 20 }

    static func parts(of size: Int64, partSize: Int64) -> [Part] {
        stride(from: Int64(0), to: size, by: Int(partSize)).enumerated().map { index, offset in
            Part(number: index + 1, offset: offset, length: min(partSize, size - offset))
        }
    }

    /// Uploads the file; returns the bytes sent (the parts a resumed upload already held are not).
    func run() async throws -> Int64 {
        let parts = Self.parts(
            of: file.size,
            partSize: Self.partSize(for: file.size, preferred: client.options.partSize)
        )
        let resumed = try await resumable(parts)
        let uploadID: String
        if let resumed { uploadID = resumed.0 } else { uploadID = try await create() }
        var stored = resumed?.1 ?? [:]
        do {
            let remaining = parts.filter { stored[$0.number] == nil }
            let etags = try await Publisher.inParallel(remaining.indices, width: client.options.partConcurrency) {
                try await put(remaining[$0], uploadID: uploadID)
            }
            for (part, etag) in zip(remaining, etags) { stored[part.number] = etag }
            try await complete(uploadID, etags: parts.map { stored[$0.number]! })
            return remaining.reduce(0) { $0 + $1.length }
        } catch let error as PublishError where error.kind == .network {
            throw PublishError(
                "\(error.description); the parts already stored stay for the next publish, which resumes this upload",
                kind: .network
            )
        } catch {
            try? await abort(uploadID)
            throw error
        }
    }

    /// An upload of this key a killed publish left, with the parts of it that match the
    /// file now (by number: ETag); every other upload of the key is aborted.
    private func resumable(_ parts: [Part]) async throws -> (String, [Int: String])? {
        let uploads = try await destination.unfinishedUploads().filter { $0.key == key }.map(\.uploadID)
        var chosen: (String, [Int: String])?
        for id in uploads {
            var matching: [Int: String] = [:]
            if chosen == nil {
                let listed = try await destination.storedParts(key: key, uploadID: id)
                for part in parts {
                    guard let stored = listed[part.number], stored.size == part.length,
                        stored.etag == (try Self.digests(of: file.url, part).md5)
                    else { continue }
                    matching[part.number] = stored.etag
                }
            }
            if chosen == nil, !matching.isEmpty { chosen = (id, matching) } else { try await abort(id) }
        }
        return chosen
    }

    private func create() async throws -> String {
        let response = try await client.send(
            .POST,
            key: key,
            query: [("uploads", "")],
            headers: destination.objectHeaders(for: file, sha256: sha256),
            what: "POST \(name) (start a multipart upload)"
        )
        guard response.status == 200, let id = S3XML.values(of: "UploadId", in: response.body).first else {
            throw destination.failure("POST (start a multipart upload)", file.path, response)
        }
        return id
    }

    /// Sends one part and checks that what S3 stored has the part's MD5; returns its ETag.
    private func put(_ part: Part, uploadID: String) async throws -> String {
        let digests = try Self.digests(of: file.url, part)
        let response = try await client.send(
            .PUT,
            key: key,
            query: [("partNumber", String(part.number)), ("uploadId", uploadID)],
            headers: [("content-length", String(part.length))],
            payload: .file(file.url, offset: part.offset, length: part.length, sha256: digests.sha256),
            what: "PUT \(name) (part \(part.number))"
        )
        guard response.status == 200 else {
            throw destination.failure("PUT (part \(part.number))", file.path, response)
        }
        let etag = response.headers.first(name: "etag").map(Self.unquoted)
        guard etag == digests.md5 else {
            throw PublishError(
                "PUT \(name) (part \(part.number)): stored with ETag \(etag ?? "none"), not the part's MD5 \(digests.md5); publish again",
                kind: .server
            )
        }
        return digests.md5
    }

    /// Joins the parts; S3 can answer `200` with an error document, which counts as failure.
    private func complete(_ uploadID: String, etags: [String]) async throws {
        let body =
            "<CompleteMultipartUpload>"
            + etags.enumerated().map { "<Part><PartNumber>\($0 + 1)</PartNumber><ETag>\"\($1)\"</ETag></Part>" }
            .joined()
            + "</CompleteMultipartUpload>"
        let response = try await client.send(
            .POST,
            key: key,
            query: [("uploadId", uploadID)],
            headers: [("content-type", "application/xml")],
            payload: .bytes(Array(body.utf8)),
            what: "POST \(name) (complete a multipart upload)"
        )
        guard response.status == 200, response.code == nil else {
            throw destination.failure("POST (complete a multipart upload)", file.path, response)
        }
        let expected = Self.multipartETag(etags)
        // Ceph's radosgw answers with an empty ETag here; any other must be the one the parts make.
        if let etag = S3XML.values(of: "ETag", in: response.body).first.map(Self.unquoted), !etag.isEmpty,
            etag != expected
        {
            throw PublishError(
                "POST \(name): the joined object has ETag \(etag), not \(expected) as its parts make; publish again",
                kind: .server
            )
        }
    }

    private func abort(_ uploadID: String) async throws {
        let response = try await client.send(
            .DELETE,
            key: key,
            query: [("uploadId", uploadID)],
            what: "DELETE \(name) (abort a multipart upload)"
        )
        guard [200, 204, 404].contains(response.status) else {
            throw destination.failure("DELETE (abort a multipart upload)", file.path, response)
        }
    }

    /// SHA-256 (S3's payload hash) and MD5 (its part ETag) of one part, in one read.
    static func digests(of url: URL, _ part: Part) throws -> (sha256: String, md5: String) {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(part.offset))
        var sha = SHA256()
        var md5 = Insecure.MD5()
        var remaining = part.length
        while remaining > 0, let chunk = try handle.read(upToCount: Int(min(1 << 20, remaining))), !chunk.isEmpty {
            sha.update(data: chunk)
            md5.update(data: chunk)
            remaining -= Int64(chunk.count)
        }
        return (S3RequestSigner.hex(sha.finalize()), S3RequestSigner.hex(md5.finalize()))
    }

    /// S3's ETag of a multipart object: the MD5 of its parts' MD5s, then `-` and the count.
    static func multipartETag(_ partMD5s: [String]) -> String {
        var md5 = Insecure.MD5()
        for part in partMD5s { md5.update(data: Data(hexBytes(part))) }
        return S3RequestSigner.hex(md5.finalize()) + "-\(partMD5s.count)"
    }

    /// The multipart ETags `file` would have if uploaded in `parts` parts of one of the part
    /// sizes breeze and common tools use (8 MiB for the AWS CLI, say), read in one pass.
    static func etags(of file: LocalFile, parts: Int, candidates: [Int64]) throws -> Set<String> {
        let common: [Int64] = [5 << 20, 8 << 20, 15 << 20, 16 << 20, 64 << 20, 100 << 20]
        let evenSplit = wholeMiB((file.size + Int64(parts) - 1) / Int64(parts))
        let sizes = Set(candidates + common + [evenSplit]).filter {
            $0 > 0 && (file.size + $0 - 1) / $0 == Int64(parts)
        }
        guard !sizes.isEmpty else { return [] }
        let handle = try FileHandle(forReadingFrom: file.url)
        defer { try? handle.close() }
        var running = sizes.map { (size: $0, current: Insecure.MD5(), filled: Int64(0), parts: [String]()) }
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            for index in running.indices {
                var rest = chunk[...]
                while !rest.isEmpty {
                    let take = Int(min(Int64(rest.count), running[index].size - running[index].filled))
                    running[index].current.update(data: rest.prefix(take))
                    running[index].filled += Int64(take)
                    rest = rest.dropFirst(take)
                    if running[index].filled == running[index].size {
                        running[index].parts.append(S3RequestSigner.hex(running[index].current.finalize()))
                        (running[index].current, running[index].filled) = (Insecure.MD5(), 0)
                    }
                }
            }
        }
        return Set(
            running.map { item in
                let parts = item.filled > 0 ? item.parts + [S3RequestSigner.hex(item.current.finalize())] : item.parts
                return multipartETag(parts)
            }
        )
    }

    static func unquoted(_ etag: String) -> String {
        etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")).lowercased()
    }

    private static func hexBytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex), index < hex.endIndex {
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return bytes
    }
}

extension S3Destination {
    /// Multipart uploads under the prefix that were neither completed nor aborted.
    func unfinishedUploads() async throws -> [(key: String, uploadID: String)] {
        try await listEntries(
            "Upload",
            query: [("uploads", "")],
            paging: [("key-marker", "NextKeyMarker"), ("upload-id-marker", "NextUploadIdMarker")]
        ).compactMap { entry in
            guard let key = S3XML.values(of: "Key", in: entry).first, relative(key) != nil,
                let id = S3XML.values(of: "UploadId", in: entry).first
            else { return nil }
            return (key, id)
        }
    }

    /// The parts an upload holds: number → (size, ETag without quotes).
    func storedParts(key: String, uploadID: String) async throws -> [Int: (size: Int64, etag: String)] {
        var parts: [Int: (size: Int64, etag: String)] = [:]
        let entries = try await listEntries(
            "Part",
            key: key,
            query: [("uploadId", uploadID)],
            paging: [("part-number-marker", "NextPartNumberMarker")]
        )
        for entry in entries {
            guard let number = S3XML.values(of: "PartNumber", in: entry).first.flatMap({ Int($0) }),
                let size = S3XML.values(of: "Size", in: entry).first.flatMap({ Int64($0) }),
                let etag = S3XML.values(of: "ETag", in: entry).first
            else { continue }
            parts[number] = (size, S3MultipartUpload.unquoted(etag))
        }
        return parts
    }

    /// Parts stored by unfinished multipart uploads, by path: what a killed publish left, and
    /// what the next publish of that path resumes or aborts.
    package func partsOfUnfinishedUploads() async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for upload in try await unfinishedUploads() {
            let parts = try await storedParts(key: upload.key, uploadID: upload.uploadID)
            counts[relative(upload.key) ?? upload.key, default: 0] += parts.count
        }
        return counts
    }
}
