import Foundation

/// What the store knows about one installed version: where it came from, the validators
/// of its root document, and every file it verified.
///
/// Kept beside the version's folder as `<id>.json`, so a check never needs to re-hash
/// what is already installed.
public struct VersionRecord: Sendable, Codable, Hashable {
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
        id: Int, source: String, created: Date = Date(), validators: HTTPValidators? = nil,
        files: [String: FileRecord] = [:], previous: Int? = nil, metadata: [String: String] = [:]
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
public struct FileRecord: Sendable, Codable, Hashable {
    public var hash: ContentHash
    public var size: Int64

    public init(hash: ContentHash, size: Int64) {
        self.hash = hash
        self.size = size
    }

    // Compact on disk: {"h": "sha256:…", "s": 123}, since a record may list many thousands.
    private enum CodingKeys: String, CodingKey { case h, s }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let text = try container.decode(String.self, forKey: .h)
        guard let colon = text.firstIndex(of: ":"), let hash = ContentHash(hex: String(text[text.index(after: colon)...])) else {
            throw DecodingError.dataCorruptedError(forKey: .h, in: container, debugDescription: "bad digest \(text)")
        }
        self.hash = hash
        self.size = try container.decode(Int64.self, forKey: .s)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(hash.description, forKey: .h)
        try container.encode(size, forKey: .s)
    }
}
