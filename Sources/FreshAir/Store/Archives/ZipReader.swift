import Foundation

/// Reads a `.zip` from disk through its central directory: stored and deflated entries,
/// Zip64 sizes, Unix modes and links. Each entry's size and CRC-32 are checked; encrypted
/// entries and other methods are refused.
struct ZipReader {
    let path: String

    private struct CentralEntry {
        var name: String
        var method: UInt16
        var flags: UInt16
        var crc: UInt32
        var compressedSize: Int64
        var size: Int64
        var localHeaderOffset: Int64
        var unixMode: UInt32?
    }

    func extract(into extractor: ArchiveExtractor) throws {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let fileSize = Int64(try handle.seekToEnd())
        for entry in try centralDirectory(handle, fileSize: fileSize) {
            try extract(entry, from: handle, fileSize: fileSize, into: extractor)
        }
    }

    private func centralDirectory(_ handle: FileHandle, fileSize: Int64) throws -> [CentralEntry] {
        let tailLength = min(fileSize, 65_557)
        let tail = try read(handle, at: fileSize - tailLength, count: Int(tailLength), fileSize: fileSize)
        guard tail.count >= 22,
            let eocd = stride(from: tail.count - 22, through: 0, by: -1).first(where: { tail.u32($0) == 0x0605_4B50 })
        else {
            throw ArchiveError(.corrupt, "not a zip file (no end of central directory)")
        }
        var count = Int64(tail.u16(eocd + 10))
        var directorySize = Int64(tail.u32(eocd + 12))
        var directoryOffset = Int64(tail.u32(eocd + 16))
        if count == 0xFFFF || directoryOffset == 0xFFFF_FFFF, eocd >= 20, tail.u32(eocd - 20) == 0x0706_4B50 {
            let zip64 = try read(
                handle,
                at: try Self.offset(tail.u64(eocd - 20 + 8), "Zip64 locator"),
                count: 56,
                fileSize: fileSize
            )
            guard zip64.count == 56, zip64.u32(0) == 0x0606_4B50 else {
                throw ArchiveError(.corrupt, "bad Zip64 directory")
            }
            count = try Self.offset(zip64.u64(32), "Zip64 entry count")
            directorySize = try Self.offset(zip64.u64(40), "Zip64 directory size")
            directoryOffset = try Self.offset(zip64.u64(48), "Zip64 directory offset")
        }
        // Compared as what is left of the file, not as a sum that could pass Int64.max.
        guard directoryOffset <= fileSize, directorySize <= fileSize - directoryOffset, directorySize < 1 << 30
        else {
            throw ArchiveError(.truncated, "the central directory lies outside the file")
        }
        let directory = try read(handle, at: directoryOffset, count: Int(directorySize), fileSize: fileSize)
        var entries: [CentralEntry] = []
        var offset = 0
        for _ in 0..<count {
            guard offset + 46 <= directory.count, directory.u32(offset) == 0x0201_4B50 else {
                throw ArchiveError(.corrupt, "damaged central directory")
            }
            let nameLength = Int(directory.u16(offset + 28))
            let extraLength = Int(directory.u16(offset + 30))
            let commentLength = Int(directory.u16(offset + 32))
            guard offset + 46 + nameLength + extraLength + commentLength <= directory.count else {
                throw ArchiveError(.corrupt, "damaged central directory")
            }
            var entry = CentralEntry(
                name: try ArchiveEntry.text(directory[(offset + 46)..<(offset + 46 + nameLength)]),
                method: directory.u16(offset + 10),
                flags: directory.u16(offset + 8),
                crc: directory.u32(offset + 16),
                compressedSize: Int64(directory.u32(offset + 20)),
                size: Int64(directory.u32(offset + 24)),
                localHeaderOffset: Int64(directory.u32(offset + 42)),
                unixMode: directory.u16(offset + 4) >> 8 == 3 ? directory.u32(offset + 38) >> 16 : nil
            )
            try readZip64Extra(directory, at: offset + 46 + nameLength, length: extraLength, into: &entry)
            entries.append(entry)
            offset += 46 + nameLength + extraLength + commentLength
        }
        return entries
    }

    /// The Zip64 extra field's sizes and offset, each read only from inside the field itself
    /// (which the caller checked lies inside the directory).
    private func readZip64Extra(_ data: [UInt8], at start: Int, length: Int, into entry: inout CentralEntry) throws {
        let end = start + length
        var offset = start
        while offset + 4 <= end {
            let id = data.u16(offset)
            let size = Int(data.u16(offset + 2))
            let fieldEnd = offset + 4 + size
            guard fieldEnd <= end else { throw ArchiveError(.corrupt, "damaged extra field", entry: entry.name) }
            if id == 0x0001 {
                var field = offset + 4
                func next(_ what: String) throws -> Int64 {
                    guard field + 8 <= fieldEnd else {
                        throw ArchiveError(
                            .corrupt,
                            "the Zip64 field is shorter than its entry needs",
                            entry: entry.name
                        )
                    }
                    defer { field += 8 }
                    return try Self.offset(data.u64(field), what)
                }
                if entry.size == 0xFFFF_FFFF { entry.size = try next("Zip64 size") }
                if entry.compressedSize == 0xFFFF_FFFF { entry.compressedSize = try next("Zip64 compressed size") }
                if entry.localHeaderOffset == 0xFFFF_FFFF { entry.localHeaderOffset = try next("Zip64 offset") }
            }
            offset = fieldEnd
        }
    }

    /// A Zip64 size, count or offset: an `Int64`, or a damaged archive (no file is 2^63 bytes).
    private static func offset(_ value: UInt64, _ what: String) throws(ArchiveError) -> Int64 {
        guard let value = Int64(exactly: value) else {
            throw ArchiveError(.corrupt, "damaged archive: the \(what) (\(value)) is past any file")
        }
        return value
    }

    private func extract(
        _ entry: CentralEntry,
        from handle: FileHandle,
        fileSize: Int64,
        into extractor: ArchiveExtractor
    ) throws {
        guard entry.flags & 1 == 0 else {
            throw ArchiveError(.unsupportedEntry, "encrypted entries are not supported", entry: entry.name)
        }
        let local = try read(handle, at: entry.localHeaderOffset, count: 30, fileSize: fileSize)
        guard local.count == 30, local.u32(0) == 0x0403_4B50 else {
            throw ArchiveError(.corrupt, "damaged local header", entry: entry.name)
        }
        // The local header was read whole, so its offset is inside the file: no sum below passes Int64.max.
        let dataStart = entry.localHeaderOffset + 30 + Int64(local.u16(26)) + Int64(local.u16(28))
        guard dataStart <= fileSize, entry.compressedSize <= fileSize - dataStart else {
            throw ArchiveError(.truncated, "the entry's data runs past the end of the file", entry: entry.name)
        }
        let fileType = (entry.unixMode ?? 0) & 0o170000
        if entry.name.hasSuffix("/") || fileType == 0o040000 {
            try extractor.begin(ArchiveEntry(path: entry.name, kind: .directory, size: 0, mode: 0o755))
            return
        }
        if fileType == 0o120000 {
            guard entry.method == 0, entry.size < 4096 else {
                throw ArchiveError(.corrupt, "bad link entry", entry: entry.name)
            }
            let target = try ArchiveEntry.text(
                try read(handle, at: dataStart, count: Int(entry.size), fileSize: fileSize)
            )
            try extractor.begin(
                ArchiveEntry(path: entry.name, kind: .symbolicLink(target: target), size: 0, mode: 0o777)
            )
            return
        }
        if let fileType = entry.unixMode.map({ $0 & 0o170000 }), fileType != 0, fileType != 0o100000 {
            throw ArchiveError(.unsupportedEntry, "not a regular file", entry: entry.name)
        }
        try extractor.begin(
            ArchiveEntry(path: entry.name, kind: .file, size: entry.size, mode: (entry.unixMode ?? 0o644) & 0o7777)
        )
        var crc = CRC32()
        let sink: (UnsafeRawBufferPointer) throws -> Void = { bytes in
            crc.update(bytes)
            try extractor.write(bytes)
        }
        let inflater: Inflater?
        switch entry.method {
        case 0: inflater = nil
        case 8: inflater = try Inflater(.rawDeflate)
        default:
            throw ArchiveError(
                .unsupportedEntry,
                "compression method \(entry.method) is not supported (use deflate)",
                entry: entry.name
            )
        }
        try handle.seek(toOffset: UInt64(dataStart))
        var remaining = entry.compressedSize
        while remaining > 0 {
            guard let chunk = try handle.read(upToCount: Int(min(remaining, Int64(ArchiveReader.chunkSize)))),
                !chunk.isEmpty
            else {
                throw ArchiveError(.truncated, "the entry's data ends early", entry: entry.name)
            }
            remaining -= Int64(chunk.count)
            try chunk.withUnsafeBytes { bytes in
                if let inflater { try inflater.inflate(bytes, sink: sink) } else { try sink(bytes) }
            }
        }
        if let inflater, !inflater.isComplete {
            throw ArchiveError(.truncated, "the deflated data ends early", entry: entry.name)
        }
        guard UInt32(truncatingIfNeeded: crc.value) == entry.crc else {
            throw ArchiveError(.corrupt, "CRC-32 mismatch: the entry is damaged", entry: entry.name)
        }
        try extractor.end()
    }

    private func read(_ handle: FileHandle, at offset: Int64, count: Int, fileSize: Int64) throws -> [UInt8] {
        guard offset >= 0, offset <= fileSize else {
            throw ArchiveError(.corrupt, "damaged archive: an offset (\(offset)) lies outside the file")
        }
        try handle.seek(toOffset: UInt64(offset))
        return [UInt8](try handle.read(upToCount: count) ?? Data())
    }
}

private extension [UInt8] {
    func u16(_ offset: Int) -> UInt16 { UInt16(self[offset]) | UInt16(self[offset + 1]) << 8 }
    func u32(_ offset: Int) -> UInt32 { UInt32(u16(offset)) | UInt32(u16(offset + 2)) << 16 }
    func u64(_ offset: Int) -> UInt64 { UInt64(u32(offset)) | UInt64(u32(offset + 4)) << 32 }
}
