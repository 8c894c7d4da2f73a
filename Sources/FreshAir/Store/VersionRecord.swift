import Foundation

/// What the store knows about one installed version: where it came from, the validators
/// of its root document, and every file it verified.
///
/// Kept beside the version's folder as `<id>.json`, so a check never needs to re-hash
/// what is already installed.
public struct VersionRecord: Sendable, Hashable {
    /// The version's number in its store; higher is newer.
    public var id: Int
    /// The URL the content came from.
    public var source: String
    public var created: Date
    /// `ETag`/`Last-Modified` of the root document (manifest, package or index).
    public var validators: HTTPValidators?
    /// Every file in the version and what it was verified to be.
    public var files: [String: FileRecord]
    /// The version that was live before this one, kept for ``BundleStore/rollBack()``.
    public var previous: Int?
    /// Facts a delivery mode keeps about the version (a package's date, bundle versions).
    public var metadata: [String: String]

    public init(
        id: Int,
        source: String,
        created: Date = Date(),
        validators: HTTPValidators? = nil,
        files: [String: FileRecord] = [:],
        previous: Int? = nil,
        metadata: [String: String] = [:]
    ) {
        self.id = id
        self.source = source
        self.created = created
        self.validators = validators
        self.files = files
        self.previous = previous
        self.metadata = metadata
    }
}

/// A verified file: its digest and size.
public struct FileRecord: Sendable, Hashable {
    public var hash: ContentHash
    public var size: Int64

    public init(hash: ContentHash, size: Int64) {
        self.hash = hash
        self.size = size
    }
}

// On disk: one JSON object, the small fields first and `files` last, each file compact
// (`{"h": "sha256:…", "s": 123}`) since a record may list many thousands.
extension VersionRecord {
    init(json data: some Collection<UInt8>) throws(VersionRecordError) {
        let document: JSONValue
        do { document = try JSONReader.parse(data) } catch { throw VersionRecordError(detail: "\(error)") }
        guard let id = document["id"]?.integer.flatMap({ Int(exactly: $0) }), let source = document["source"]?.string
        else {
            throw VersionRecordError(detail: "\"id\" or \"source\" is missing")
        }
        var files: [String: FileRecord] = [:]
        let listed = document["files"]?.pairs ?? []
        files.reserveCapacity(listed.count)
        for (path, file) in listed {
            guard let text = file["h"]?.string, let colon = text.firstIndex(of: ":"),
                let hash = ContentHash(hex: String(text[text.index(after: colon)...])), let size = file["s"]?.integer
            else { throw VersionRecordError(detail: "the entry for \"\(path)\" has no valid \"h\" and \"s\"") }
            files[path] = FileRecord(hash: hash, size: size)
        }
        let validators = document["validators"].map {
            HTTPValidators(etag: $0["etag"]?.string, lastModified: $0["lastModified"]?.string)
        }
        var metadata: [String: String] = [:]
        for (key, value) in document["metadata"]?.pairs ?? [] { metadata[key] = value.string }
        self.init(
            id: id,
            source: source,
            created: document["created"]?.string.flatMap { try? Date($0, strategy: .iso8601) }
                ?? Date(timeIntervalSince1970: 0),
            validators: validators,
            files: files,
            previous: document["previous"]?.integer.flatMap { Int(exactly: $0) },
            metadata: metadata
        )
    }

    var jsonBytes: [UInt8] {
        var head: [(key: String, value: JSONValue)] = [
            ("id", JSONValue(id)), ("source", .string(source)), ("created", .string(created.formatted(.iso8601))),
        ]
        if let previous { head.append(("previous", JSONValue(previous))) }
        if let validators {
            var pairs: [(key: String, value: JSONValue)] = []
            if let etag = validators.etag { pairs.append(("etag", .string(etag))) }
            if let lastModified = validators.lastModified { pairs.append(("lastModified", .string(lastModified))) }
            head.append(("validators", .object(pairs)))
        }
        head.append(("metadata", .object(metadata.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })))
        head.append(
            (
                "files",
                .object(
                    files.sorted { $0.key < $1.key }.map { path, file in
                        (path, .object([("h", .string(file.hash.description)), ("s", JSONValue(file.size))]))
                    }
                )
            )
        )
        return JSONValue.object(head).serializedBytes(indent: 0)
    }
}

/// A version record that could not be read.
struct VersionRecordError: Error, CustomStringConvertible {
    var detail: String
    var description: String { detail }
}
