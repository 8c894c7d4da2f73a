/// Paths held as their UTF-8 bytes one after another, read by position: how a version's table,
/// a plan's files and the set of names a tree has hold their paths.
///
/// A Swift `String` longer than 15 bytes is 64 bytes of heap of its own, beside the 16 its
/// holder keeps: at 100,000 files every list that held a string per path cost 8 MB, and a sync
/// held several (`heaptrack`, 2026-11-27). Here a path is its own length and 4 bytes.
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
    func bytes(at index: Int) -> ArraySlice<UInt8> { bytes[start(of: index)..<Int(ends[index])] }

    /// The path at `index`, as a string made now.
    func string(at index: Int) -> String { String(decoding: bytes(at: index), as: UTF8.self) }

    /// The paths, as strings made now.
    var strings: [String] { ends.indices.map(string(at:)) }

    /// Adds the path whose UTF-8 bytes are `path`.
    mutating func append(_ path: some Collection<UInt8>) {
        bytes.append(contentsOf: path)
        precondition(bytes.count <= UInt32.max, "more than 4 GB of paths")
        ends.append(UInt32(bytes.count))
    }

    mutating func removeLast() {
        bytes.removeSubrange(start(of: ends.count - 1)...)
        ends.removeLast()
    }

    /// Keeps, in order and in place, the paths whose `keep` is `true` (one for each path).
    mutating func keep(_ keep: [Bool]) {
        precondition(keep.count == count)
        // Paths move down, never over bytes not read yet: `keptBytes <= start`.
        var (kept, keptBytes, start) = (0, 0, 0)
        for index in ends.indices {
            let end = Int(ends[index])
            defer { start = end }
            guard keep[index] else { continue }
            for offset in 0..<(end - start) { bytes[keptBytes + offset] = bytes[start + offset] }
            keptBytes += end - start
            ends[kept] = UInt32(keptBytes)
            kept += 1
        }
        bytes.removeSubrange(keptBytes...)
        ends.removeSubrange(kept...)
    }

    /// Room for `count` more paths.
    mutating func reserveCapacity(_ count: Int) { ends.reserveCapacity(ends.count + count) }

    /// Gives back the room a list built by appending grew beyond its paths.
    mutating func trimRoom() {
        bytes.trimRoom()
        ends.trimRoom()
    }

    private func start(of index: Int) -> Int { index == 0 ? 0 : Int(ends[index - 1]) }

    // As a list of strings: the summary's JSON as it was.
    init(from decoder: any Decoder) throws { self.init(try decoder.singleValueContainer().decode([String].self)) }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(strings)
    }
}
