/// The `.tar` package a version was installed from, read back from the version's files and
/// its `TarLayout`: the source a chunk delta reuses when the next package changes only in
/// part. A file that is missing or no longer of its installed size reads as zeros, so its
/// chunks are simply not found and are fetched; the whole result is checked in any case.
final class ReassembledPackage: ChunkSource {
    private let layout: TarLayout
    private let folder: String
    /// Where each segment starts in the package, for a binary search.
    private let starts: [Int64]
    /// The file segment read last, kept open: reads come in package order.
    private var open: (segment: Int, file: InputFile?)?

    /// - Parameters:
    ///   - layout: the package's layout, recorded when it was installed.
    ///   - folder: the version folder it was installed into.
    init(layout: TarLayout, folder: String) {
        self.layout = layout
        self.folder = folder
        var position: Int64 = 0
        starts = layout.segments.map { segment in
            defer { position += segment.length }
            return position
        }
    }

    var size: Int64 { layout.size }

    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws {
        guard offset >= 0, offset + Int64(buffer.count) <= layout.size else {
            throw FreshAirError.fileSystem(
                operation: "read",
                path: folder,
                reason: "the rebuilt package ends before byte \(offset + Int64(buffer.count))",
                underlying: nil
            )
        }
        var done = 0
        var segment = segmentIndex(containing: offset)
        while done < buffer.count {
            let position = offset + Int64(done)
            let within = position - starts[segment]
            let count = Int(min(Int64(buffer.count - done), layout.segments[segment].length - within))
            let target = UnsafeMutableRawBufferPointer(rebasing: buffer[done..<(done + count)])
            switch layout.segments[segment] {
            case .bytes(let bytes):
                bytes.withUnsafeBytes {
                    target.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(within)..<(Int(within) + count)]))
                }
            case .zeros:
                target.initializeMemory(as: UInt8.self, repeating: 0)
            case .file(let path, let length):
                if let file = try file(for: segment, path: path, length: length) {
                    try file.read(at: within, into: target)
                } else {
                    target.initializeMemory(as: UInt8.self, repeating: 0)
                }
            }
            done += count
            segment += 1
        }
    }

    /// The last segment starting at or before `offset`.
    private func segmentIndex(containing offset: Int64) -> Int {
        max(0, starts.indices.firstPosition { starts[$0] > offset } - 1)
    }

    /// The installed file of a segment, or `nil` when it is gone or changed size.
    private func file(for segment: Int, path: BundlePath, length: Int64) throws -> InputFile? {
        if let open, open.segment == segment { return open.file }
        let file = try? InputFile(path: folder + "/" + path.string)
        let usable = try file.map { try $0.size == length } ?? false
        open = (segment, usable ? file : nil)
        return open?.file
    }
}
