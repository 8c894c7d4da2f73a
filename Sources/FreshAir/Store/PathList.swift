/// Paths held as their UTF-8 bytes one after another: the paths a sync downloaded, for its
/// summary.
///
/// ``SyncSummary/downloaded`` was a `[String]` filled as files landed: at 100,000 files, 100,000
/// strings of 64 bytes and the arrays holding them, 9.6 MB at the very end of a first sync
/// (`heaptrack`, 2026-11-27). Held as bytes it is 2 MB, and the strings are made only for a
/// caller who reads them.
struct PathList: Sendable, Hashable, Codable {
    private var bytes: [UInt8] = []
    /// Where each path ends in ``bytes``.
    private var ends: [UInt32] = []

    init() {}

    init(_ paths: [String]) {
        for path in paths { append(path.utf8) }
    }

    var count: Int { ends.count }

    /// The UTF-8 bytes of the path at `index`, read in place.
    func bytes(at index: Int) -> ArraySlice<UInt8> { bytes[(index == 0 ? 0 : Int(ends[index - 1]))..<Int(ends[index])] }

    /// The paths, as strings made now.
    var strings: [String] { ends.indices.map { String(decoding: bytes(at: $0), as: UTF8.self) } }

    /// Adds the path whose UTF-8 bytes are `path`.
    mutating func append(_ path: some Collection<UInt8>) {
        bytes.append(contentsOf: path)
        precondition(bytes.count <= UInt32.max, "more than 4 GB of paths")
        ends.append(UInt32(bytes.count))
    }

    /// Room for `count` more paths.
    mutating func reserveCapacity(_ count: Int) { ends.reserveCapacity(ends.count + count) }

    // As a list of strings, the summary's JSON as it was.
    init(from decoder: any Decoder) throws { self.init(try decoder.singleValueContainer().decode([String].self)) }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(strings)
    }
}
