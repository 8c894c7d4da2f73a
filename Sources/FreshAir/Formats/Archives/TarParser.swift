/// An entry as an archive describes it, before any of it is written.
struct ArchiveEntry: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case file
        case directory
        case symbolicLink(target: String)
        case hardLink(target: String)
    }

    /// The path as written in the archive (checked later, by the extractor).
    var path: String
    var kind: Kind
    /// Bytes of content that follow (files only); `nil` when not known in advance.
    var size: Int64?
    /// Permission bits, e.g. 0o755 for an executable script.
    var mode: UInt32

    /// A name or link target: refused unless valid UTF-8 (decoding it leniently would turn
    /// bad bytes into U+FFFD, a different name from the one the archive wrote).
    static func text(_ bytes: some Collection<UInt8>) throws(ArchiveError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ArchiveError(
                .unsafeEntry,
                "a name or link target is not valid UTF-8",
                entry: String(decoding: bytes, as: UTF8.self)
            )
        }
        return text
    }
}

/// A strict, streaming tar reader: ustar, pax extended headers (`x`, `g`) and GNU long
/// names (`L`, `K`). Input arrives in chunks of any size; content is passed on without
/// being copied or held.
///
/// Refused with `ArchiveError`: bad header checksums (which is also what an entry longer
/// than its header says looks like), device files and FIFOs, sparse and multi-volume
/// entries, and input that ends inside an entry.
struct TarParser {
    enum Event {
        case begin(ArchiveEntry)
        case content(UnsafeRawBufferPointer)
        case end
    }

    private enum State {
        case header
        case content(remaining: Int64, padding: Int)
        case metadata(kind: UInt8, remaining: Int, padding: Int)
        case padding(Int)
        case finished
    }

    private var state = State.header
    private var block: [UInt8] = []
    private var metadata: [UInt8] = []
    private var paxPath: String?
    private var paxLinkPath: String?
    private var paxSize: Int64?
    private var longName: String?
    private var longLink: String?
    private var currentPath = ""
    /// Pax and GNU long-name records are small; anything larger is an attack.
    private let metadataLimit = 1 << 20

    /// Whether the end-of-archive marker was seen.
    var isFinished: Bool { if case .finished = state { true } else { false } }

    mutating func feed(_ input: UnsafeRawBufferPointer, _ handle: (Event) throws -> Void) throws {
        var offset = 0
        while offset < input.count {
            switch state {
            case .finished:
                return  // What follows the end marker (tar pads to a record size) is ignored.
            case .padding(let count):
                let skip = min(count, input.count - offset)
                offset += skip
                state = count - skip == 0 ? .header : .padding(count - skip)
            case .content(let remaining, let padding):
                let take = Int(min(remaining, Int64(input.count - offset)))
                if take > 0 { try handle(.content(UnsafeRawBufferPointer(rebasing: input[offset..<offset + take]))) }
                offset += take
                if remaining - Int64(take) == 0 {
                    try handle(.end)
                    state = padding > 0 ? .padding(padding) : .header
                } else {
                    state = .content(remaining: remaining - Int64(take), padding: padding)
                }
            case .metadata(let kind, let remaining, let padding):
                let take = min(remaining, input.count - offset)
                metadata.append(contentsOf: input[offset..<offset + take])
                offset += take
                if remaining - take == 0 {
                    try absorbMetadata(kind)
                    state = padding > 0 ? .padding(padding) : .header
                } else {
                    state = .metadata(kind: kind, remaining: remaining - take, padding: padding)
                }
            case .header:
                let take = min(512 - block.count, input.count - offset)
                block.append(contentsOf: input[offset..<offset + take])
                offset += take
                if block.count == 512 {
                    try parseHeader(handle)
                    block.removeAll(keepingCapacity: true)
                }
            }
        }
    }

    /// Call when the input ends: refuses an archive cut off inside an entry, and one that
    /// stops between entries without the zero blocks that end every tar archive: a body cut at
    /// an entry boundary would otherwise install part of the package as if it were whole.
    func finish() throws(ArchiveError) {
        switch state {
        case .finished:
            return
        case .header where block.isEmpty:
            throw ArchiveError(
                .truncated,
                "the archive stops without its end-of-archive blocks: it was cut short on the way",
                entry: currentPath.isEmpty ? nil : "after \(currentPath)"
            )
        case .content(let remaining, _):
            throw ArchiveError(
                .truncated,
                "the archive ends \(remaining) bytes before this entry does",
                entry: currentPath
            )
        default:
            throw ArchiveError(
                .truncated,
                "the archive ends inside a header",
                entry: currentPath.isEmpty ? nil : currentPath
            )
        }
    }

    private mutating func parseHeader(_ handle: (Event) throws -> Void) throws {
        if block.allSatisfy({ $0 == 0 }) {
            state = .finished
            return
        }
        try verifyChecksum()
        let type = block[156]
        let size = try number(124, 12, field: "size")
        let padding = Int((512 - size % 512) % 512)
        switch type {
        case UInt8(ascii: "x"), UInt8(ascii: "g"), UInt8(ascii: "L"), UInt8(ascii: "K"):
            guard size <= metadataLimit else { throw ArchiveError(.tooLarge, "an extended header of \(size) bytes") }
            metadata.removeAll(keepingCapacity: true)
            state = size == 0 ? .header : .metadata(kind: type, remaining: Int(size), padding: padding)
            if size == 0 { try absorbMetadata(type) }
            return
        default:
            break
        }

        let magic = Array(block[257..<263])
        let isUstar = magic == Array("ustar\0".utf8)
        var path = try paxPath ?? longName ?? string(0, 100)
        if paxPath == nil, longName == nil, isUstar {
            let prefix = try string(345, 155)
            if !prefix.isEmpty { path = prefix + "/" + path }
        }
        let linkTarget = try paxLinkPath ?? longLink ?? string(157, 100)
        let entrySize = paxSize ?? size
        let mode = UInt32(truncatingIfNeeded: (try? number(100, 8, field: "mode")) ?? 0o644)
        (paxPath, paxLinkPath, paxSize, longName, longLink) = (nil, nil, nil, nil, nil)
        currentPath = path

        let kind: ArchiveEntry.Kind
        switch type {
        case 0, UInt8(ascii: "0"), UInt8(ascii: "7"): kind = .file
        case UInt8(ascii: "5"): kind = .directory
        case UInt8(ascii: "2"): kind = .symbolicLink(target: linkTarget)
        case UInt8(ascii: "1"): kind = .hardLink(target: linkTarget)
        case UInt8(ascii: "3"), UInt8(ascii: "4"):
            throw ArchiveError(.unsupportedEntry, "device files are not content", entry: path)
        case UInt8(ascii: "6"):
            throw ArchiveError(.unsupportedEntry, "FIFOs are not content", entry: path)
        default:
            throw ArchiveError(
                .unsupportedEntry,
                "unsupported tar entry type '\(Character(UnicodeScalar(type)))'",
                entry: path
            )
        }
        let contentSize: Int64 = kind == .file ? entrySize : 0
        try handle(.begin(ArchiveEntry(path: path, kind: kind, size: contentSize, mode: mode & 0o7777)))
        // Links and folders may still carry a size in some writers: skip those bytes.
        let skip = kind == .file ? 0 : size
        if contentSize == 0 {
            try handle(.end)
            let total = try Self.paddedToBlock(skip, entry: path)
            state = total > 0 ? .padding(Int(total)) : .header
        } else {
            state = .content(remaining: contentSize, padding: Int((512 - contentSize % 512) % 512))
        }
    }

    private mutating func absorbMetadata(_ kind: UInt8) throws {
        switch kind {
        case UInt8(ascii: "L"): longName = try ArchiveEntry.text(metadata.prefix { $0 != 0 })
        case UInt8(ascii: "K"): longLink = try ArchiveEntry.text(metadata.prefix { $0 != 0 })
        case UInt8(ascii: "x"):
            for (key, value) in try Self.paxRecords(metadata) {
                switch key {
                case "path": paxPath = value
                case "linkpath": paxLinkPath = value
                case "size":
                    guard let size = Int64(value), size >= 0 else {
                        throw ArchiveError(.corrupt, "bad pax size \(value)")
                    }
                    paxSize = size
                default: break
                }
            }
        default:
            break  // Global pax headers describe the archive, not an entry.
        }
    }

    /// `"%d %s=%s\n"` records, the length counting the whole record.
    static func paxRecords(_ bytes: [UInt8]) throws(ArchiveError) -> [(String, String)] {
        var records: [(String, String)] = []
        var index = 0
        while index < bytes.count {
            guard let space = bytes[index...].firstIndex(of: UInt8(ascii: " ")),
                let length = Int(String(decoding: bytes[index..<space], as: UTF8.self)), length > space - index + 1,
                length <= bytes.count - index, bytes[index + length - 1] == UInt8(ascii: "\n")
            else {
                if bytes[index...].allSatisfy({ $0 == 0 }) { break }
                throw ArchiveError(.corrupt, "malformed pax extended header")
            }
            let record = bytes[(space + 1)..<(index + length - 1)]
            if let equals = record.firstIndex(of: UInt8(ascii: "=")) {
                let key = String(decoding: record[..<equals], as: UTF8.self)
                let value = record[(equals + 1)...]
                // Names must be exact; other values (binary xattrs among them) are only skipped.
                records.append(
                    (
                        key,
                        key == "path" || key == "linkpath"
                            ? try ArchiveEntry.text(value) : String(decoding: value, as: UTF8.self)
                    )
                )
            }
            index += length
        }
        return records
    }

    /// Whether `bytes` begin with a ustar (POSIX or GNU) header whose checksum holds: how a
    /// `.gz` package tells a tar archive inside from a single compressed file.
    static func startsWithHeader(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 512, bytes[257..<262].elementsEqual("ustar".utf8) else { return false }
        var probe = TarParser()
        probe.block = Array(bytes[0..<512])
        return probe.checksumMatches
    }

    private var checksumMatches: Bool {
        let recorded = try? number(148, 8, field: "checksum")
        var unsigned: Int64 = 0
        var signed: Int64 = 0
        for (index, byte) in block.enumerated() {
            let value = (148..<156).contains(index) ? UInt8(ascii: " ") : byte
            unsigned += Int64(value)
            signed += Int64(Int8(bitPattern: value))
        }
        return recorded == unsigned || recorded == signed
    }

    private func verifyChecksum() throws(ArchiveError) {
        guard checksumMatches else {
            throw ArchiveError(
                .corrupt,
                "tar header checksum mismatch: the data is damaged, or an entry is longer than its header says",
                entry: currentPath.isEmpty ? nil : "after \(currentPath)"
            )
        }
    }

    /// An octal field, or GNU's base-256 form for large values.
    private func number(_ offset: Int, _ length: Int, field: String) throws(ArchiveError) -> Int64 {
        let bytes = block[offset..<offset + length]
        if let first = bytes.first, first & 0x80 != 0 {
            var value: Int64 = Int64(first & 0x7F)
            for byte in bytes.dropFirst() {
                guard value < Int64.max >> 8 else { throw ArchiveError(.corrupt, "tar \(field) field overflows") }
                value = value << 8 | Int64(byte)
            }
            return value
        }
        var value: Int64 = 0
        var seenDigit = false
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                guard value < Int64.max >> 3 else { throw ArchiveError(.corrupt, "tar \(field) field overflows") }
                value = value * 8 + Int64(byte - UInt8(ascii: "0"))
                seenDigit = true
            case UInt8(ascii: " "), 0:
                if seenDigit { return value }
            default:
                throw ArchiveError(.corrupt, "tar \(field) field is not octal")
            }
        }
        return value
    }

    /// `size` rounded up to whole 512-byte blocks. A header may claim any size up to 2^63 − 1
    /// (base-256), and rounding that up passes `Int64.max`: a damaged archive, not a trap.
    static func paddedToBlock(_ size: Int64, entry: String) throws(ArchiveError) -> Int64 {
        let (total, overflow) = size.addingReportingOverflow((512 - size % 512) % 512)
        guard !overflow else {
            throw ArchiveError(.corrupt, "damaged archive: a header claims \(size) bytes, past any file", entry: entry)
        }
        return total
    }

    private func string(_ offset: Int, _ length: Int) throws(ArchiveError) -> String {
        try ArchiveEntry.text(block[offset..<offset + length].prefix { $0 != 0 })
    }

}
