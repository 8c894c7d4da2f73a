import Foundation

extension Fetcher {
    /// The server did not answer a `Range` request with exactly that range (a `200` with the
    /// whole file, another range, an encoding): the caller downloads the file whole instead.
    struct RangeRefused: Error, CustomStringConvertible {
        var url: URL
        var detail: String
        var description: String { "\(url.absoluteString): \(detail)" }
    }

    /// Fetches `range` of the file at `url`, whose size is `fileSize`, with one single-range
    /// `GET` (never multi-range: S3 and CDNs answer those with the whole file), writing it into
    /// `output` at the range's own offset as it arrives: eight pieces of 2 MB held in memory at
    /// once were most of a chunk delta's peak. No `If-Range`: a file replaced between two
    /// ranges makes an assembled file that fails its digest, and the caller then downloads it
    /// whole. Bytes of a piece that fails are overwritten by its retry, and a piece counts only
    /// once this returns (the caller records it then).
    ///
    /// - Returns: the bytes written, the range's length.
    /// - Throws: `RangeRefused` when the answer is not that range of a file that size;
    ///   ``FreshAirError`` for HTTP errors and failures, after retries.
    func range(
        _ range: ClosedRange<Int64>,
        of url: URL,
        fileSize: Int64,
        into output: OutputFile
    ) async throws -> Int64 {
        let length = Int(range.upperBound - range.lowerBound + 1)
        return try await retry.run(in: environment) { _ in
            requests.increment()
            let request = HTTPGetRequest(
                url: url,
                headers: headers + [("Range", "bytes=\(range.lowerBound)-\(range.upperBound)")],
                timeout: timeout,
                expectedBodySize: Int64(length)
            )
            do {
                return try await transport(for: url).get(request) { head, body in
                    let body = body.enforcing(throughput, url: url, uptime: environment.uptime).counted(by: ledger)
                    guard head.status == 206 else {
                        if head.status == 200 {
                            throw RangeRefused(url: url, detail: "the server ignores Range (answered 200)")
                        }
                        throw StatusFailure(head, url: url)
                    }
                    if let encoding = Self.contentEncoding(head) {
                        throw RangeRefused(url: url, detail: "the range came encoded (\(encoding))")
                    }
                    guard let answered = ContentRange(head["Content-Range"]), answered.start == range.lowerBound,
                        answered.end == range.upperBound, answered.total == fileSize
                    else {
                        throw RangeRefused(
                            url: url,
                            detail: "asked for bytes \(range.lowerBound)-\(range.upperBound)/\(fileSize), "
                                + "the server answered \(head["Content-Range"] ?? "no Content-Range")"
                        )
                    }
                    var received = 0
                    for try await chunk in body {
                        guard chunk.count <= length - received else {
                            throw RangeRefused(
                                url: url,
                                detail: "the server sent more than the \(length) bytes asked for"
                            )
                        }
                        try chunk.withUnsafeBytes { try output.write($0, at: range.lowerBound + Int64(received)) }
                        received += chunk.count
                    }
                    guard received == length else {
                        throw FreshAirError.transport(
                            TransportError(
                                kind: .interrupted,
                                url: url,
                                detail: "received \(received) of the \(length) bytes of a range"
                            )
                        )
                    }
                    // Counted as used once the file it goes into checks (ChunkDelta).
                    return Int64(received)
                }
            } catch let error as TransportError {
                throw FreshAirError.transport(error)
            }
        }
    }

    /// A document fetched whole (no validators) and, when `expected` is given, checked against
    /// the digest that lists it before anything reads it: a child manifest, a chunk index.
    ///
    /// - Throws: ``FreshAirError/hashMismatch(path:url:expected:actual:)`` for a document that
    ///   is not the one listed (named by `path`); ``FreshAirError`` for HTTP errors and
    ///   failures, after retries.
    func listedDocument(at url: URL, path: String, expected: ContentHash?, limit: Int) async throws -> Data {
        guard case .fetched(let data, _) = try await document(at: url, validators: nil, limit: limit) else {
            throw FreshAirError.httpStatus(304, url: url)
        }
        if let expected {
            let actual = ContentHash.of(data, using: expected.algorithm)
            guard actual == expected else {
                throw FreshAirError.hashMismatch(path: path, url: url, expected: expected, actual: actual)
            }
        }
        return data
    }
}
