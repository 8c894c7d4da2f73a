import Foundation

/// A fetched document's bytes: in memory, or, for a large one the caller let spill, in a file.
///
/// A root manifest of 100,000 entries is 14 MB. Held in memory as it arrived, it was the peak
/// of a large sync (the heap's 15 MB of 38 MB resident); written to disk as it arrives, it is
/// mapped and read a window at a time (``MappedFile``), and costs a few pages.
enum FetchedDocument: Sendable {
    case inMemory(Data)
    /// Written to `path` (not flushed), with the digest of its bytes, computed as they arrived.
    case spilled(path: String, digest: ContentHash, size: Int64)

    /// The bytes, read back from the file when spilled.
    func bytes() throws -> Data {
        switch self {
        case .inMemory(let data): data
        case .spilled(let path, _, _): try Disk.read(path)
        }
    }

    var size: Int64 {
        switch self {
        case .inMemory(let data): Int64(data.count)
        case .spilled(_, _, let size): size
        }
    }

    /// The SHA-256 of the bytes.
    var sha256: ContentHash {
        switch self {
        case .inMemory(let data): ContentHash.of(data, using: .sha256)
        case .spilled(_, let digest, _): digest
        }
    }

    /// Removes a spilled file (a document refused, or one nobody keeps).
    func discard() {
        if case .spilled(let path, _, _) = self { try? Disk.remove(path) }
    }
}

/// Where a large document goes instead of memory: to `path`, once it reaches `from` bytes.
struct DocumentSpill: Sendable {
    var path: String
    var from: Int
}

extension ResponseBody {
    /// The body, at most `limit` bytes: in memory, or in `spill`'s file from its threshold on
    /// (at once when the announced length reaches it). A spilled body is hashed as it is
    /// written; a failure leaves no file behind.
    func collect(upTo limit: Int, announced: Int64?, spill: DocumentSpill?) async throws -> FetchedDocument {
        guard let spill else { return .inMemory(try await collect(upTo: limit, announced: announced)) }
        var data = Data()
        if let announced, announced > 0, announced < spill.from { data.reserveCapacity(Int(announced)) }
        var file: OutputFile?
        var sink: BodySink?
        defer { file?.close() }
        var received = 0
        do {
            for try await chunk in self {
                guard received + chunk.count <= limit else { throw BodyTooLarge(limit: Int64(limit)) }
                received += chunk.count
                if sink == nil, received >= spill.from || (announced ?? 0) >= spill.from {
                    // Not flushed here: a spilled root moved into a version is flushed with it.
                    let opened = try OutputFile(path: spill.path, append: false, startsWriteback: false)
                    file = opened
                    sink = BodySink(file: opened, hasher: ContentHasher(.sha256), tee: nil, hashingApart: false)
                    if !data.isEmpty { try await sink!.write(data) }
                    data = Data()
                }
                if let sink {
                    try await sink.write(chunk)
                } else {
                    chunk.withUnsafeBytes { data.append(contentsOf: $0) }
                }
            }
            guard let sink else { return .inMemory(data) }
            return .spilled(path: spill.path, digest: try await sink.finish()!, size: Int64(received))
        } catch {
            if let sink {
                try? await sink.settle()
                try? Disk.remove(spill.path)
            }
            throw error
        }
    }
}
