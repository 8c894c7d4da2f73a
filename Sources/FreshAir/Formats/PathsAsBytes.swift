/// A list of paths read by position as their UTF-8 bytes (``PathList``, ``PathsByPosition``):
/// equal, hashed, encoded and decoded as the list of paths it reads as, however it holds them.
protocol PathsAsBytes: Hashable, Codable {
    var count: Int { get }
    /// The UTF-8 bytes of the path at `index`, read in place.
    func bytes(at index: Int) -> ArraySlice<UInt8>
    /// A list of `paths`, in order.
    init(_ paths: [String])
}

extension PathsAsBytes {
    /// The paths, as strings made now.
    var strings: [String] { (0..<count).map { String(decoding: bytes(at: $0), as: UTF8.self) } }

    static func == (left: Self, right: Self) -> Bool {
        left.count == right.count && (0..<left.count).allSatisfy { left.bytes(at: $0) == right.bytes(at: $0) }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for index in 0..<count {
            bytes(at: index).withUnsafeBytes { hasher.combine(bytes: $0) }
            hasher.combine(0xFF as UInt8)  // never in UTF-8: ends each path
        }
    }

    // As a list of strings: the summary's JSON as it was.
    init(from decoder: any Decoder) throws { self.init(try decoder.singleValueContainer().decode([String].self)) }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(strings)
    }
}
