/// Reads little-endian integers and LEB128 lengths from bytes: the binary sidecars
/// (`ChunkIndex`, `TarLayout`). Every read answers `nil` past the end.
struct ByteReader {
    let bytes: [UInt8]
    var position = 0

    var isAtEnd: Bool { position == bytes.count }
    var remaining: Int { bytes.count - position }

    mutating func take(_ count: Int) -> [UInt8]? {
        guard bytes.count - position >= count else { return nil }
        defer { position += count }
        return Array(bytes[position..<(position + count)])
    }

    mutating func littleEndian<T: FixedWidthInteger>(_: T.Type) -> T? {
        guard let raw = take(MemoryLayout<T>.size) else { return nil }
        return raw.reversed().reduce(T(0)) { ($0 << 8) | T($1) }
    }

    mutating func uint32() -> UInt32? { littleEndian(UInt32.self) }
    mutating func uint64() -> UInt64? { littleEndian(UInt64.self) }
    mutating func uint64BigEndian() -> UInt64? { take(8)?.reduce(UInt64(0)) { ($0 << 8) | UInt64($1) } }

    /// At most 5 bytes (lengths below 2^35); longer is malformed.
    mutating func leb128() -> UInt64? {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 35, by: 7) {
            guard let byte = take(1)?.first else { return nil }
            value |= UInt64(byte & 0x7f) << UInt64(shift)
            if byte & 0x80 == 0 { return value }
        }
        return nil
    }
}

/// Appends LEB128 lengths and little-endian integers: `ByteReader`'s counterpart.
struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func leb128(_ value: UInt64) {
        var value = value
        repeat {
            bytes.append(UInt8(value & 0x7f) | (value >= 0x80 ? 0x80 : 0))
            value >>= 7
        } while value > 0
    }

    mutating func littleEndian<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }
}
