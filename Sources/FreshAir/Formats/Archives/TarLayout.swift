import Foundation

/// Where a `.tar` package's bytes came from: its headers and padding kept as they were, each
/// file's data named by the path it was installed at. With it a device can rebuild the
/// package it installed from the installed files (`ReassembledPackage`) and reuse its
/// chunks when the next package changes only in part, without keeping a second copy of the
/// data: the layout of a 1 GB package of 300 files is about 50 KB.
///
/// The binary form (`versions/<id>.tar-layout`), integers LEB128 but the first:
///
/// ```
/// "FRTL"  version (1)  0 0 0      8 bytes
/// package size                    UInt64, little-endian
/// segment count
/// per segment: kind (0 bytes, 1 zeros, 2 file), length, then
///     bytes: the bytes; file: the path's length and its UTF-8
/// ```
struct TarLayout: Sendable, Hashable {
    /// A run of the package's bytes.
    enum Segment: Sendable, Hashable {
        /// Bytes kept as they were: headers, long names, extended attributes.
        case bytes([UInt8])
        /// Zero bytes: padding to 512-byte blocks, the end-of-archive blocks.
        case zeros(Int64)
        /// The data of the file installed at this path.
        case file(BundlePath, length: Int64)

        var length: Int64 {
            switch self {
            case .bytes(let bytes): Int64(bytes.count)
            case .zeros(let count): count
            case .file(_, let length): length
            }
        }
    }

    /// The package's size: the segments' lengths add up to it.
    var size: Int64
    var segments: [Segment]

    /// The layout as installed by an extractor that moved the archive's single top-level
    /// folder `top` up (`ExtractingInstaller/topLevelFolderToStrip`): its files' data named
    /// by the paths below it.
    func movingUp(_ top: String) -> TarLayout {
        let prefix = top + "/"
        return TarLayout(
            size: size,
            segments: segments.map { segment in
                guard case .file(let path, let length) = segment, path.string.hasPrefix(prefix),
                    let inner = try? BundlePath(String(path.string.dropFirst(prefix.count)))
                else { return segment }
                return .file(inner, length: length)
            }
        )
    }

    /// The binary form.
    func serialized() -> Data {
        var writer = ByteWriter(bytes: Array("FRTL".utf8) + [1, 0, 0, 0])
        writer.littleEndian(UInt64(size))
        writer.leb128(UInt64(segments.count))
        for segment in segments {
            switch segment {
            case .bytes(let bytes):
                writer.bytes.append(0)
                writer.leb128(UInt64(bytes.count))
                writer.bytes += bytes
            case .zeros(let count):
                writer.bytes.append(1)
                writer.leb128(UInt64(count))
            case .file(let path, let length):
                writer.bytes.append(2)
                writer.leb128(UInt64(length))
                writer.leb128(UInt64(path.string.utf8.count))
                writer.bytes += Array(path.string.utf8)
            }
        }
        return Data(writer.bytes)
    }

    /// Reads ``serialized()``'s form. The file is the device's own, but is checked as any
    /// input: paths must be `BundlePath`s and the lengths must add up.
    init(data: Data) throws(ChunkIndexError) {
        var reader = ByteReader(bytes: [UInt8](data))
        func fail(_ problem: String) -> ChunkIndexError { ChunkIndexError(source: "tar layout", problem: problem) }
        guard reader.take(8) == Array("FRTL".utf8) + [1, 0, 0, 0] else { throw fail("not a version 1 tar layout") }
        guard let size = reader.uint64(), size <= UInt64(Int64.max), let count = reader.leb128(),
            count <= UInt64(reader.remaining)
        else { throw fail("the header is cut short") }
        var segments: [Segment] = []
        var total: UInt64 = 0
        for _ in 0..<count {
            guard let kind = reader.take(1)?.first, let length = reader.leb128(), length <= size - total else {
                throw fail("a segment is cut short or runs past the package")
            }
            total += length
            switch kind {
            case 0:
                guard let bytes = reader.take(Int(length)) else { throw fail("bytes are cut short") }
                segments.append(.bytes(bytes))
            case 1:
                segments.append(.zeros(Int64(length)))
            case 2:
                guard let pathLength = reader.leb128(), pathLength <= 1 << 16, let raw = reader.take(Int(pathLength)),
                    let text = String(validating: raw, as: UTF8.self), let path = try? BundlePath(text)
                else { throw fail("a file's path is not a bundle path") }
                segments.append(.file(path, length: Int64(length)))
            default:
                throw fail("unknown segment kind \(kind)")
            }
        }
        guard total == size, reader.isAtEnd else { throw fail("the segments do not add up to the package") }
        self.size = Int64(size)
        self.segments = segments
    }

    init(size: Int64, segments: [Segment]) {
        self.size = size
        self.segments = segments
    }
}
