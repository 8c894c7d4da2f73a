import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The files of a ``VersionRecord``, decoded from the record's bytes when first read.
///
/// A check the server answers with `304` needs the live record's validators and facts, not
/// its entries: decoding 10,000 of them was a third of a no-change `breeze sync` (measured with
/// `perf`, 2026-11-26). A record read from disk keeps its `files` member as bytes, checked at
/// once against the exact shape FreshAir writes (`{"path":{"h":"sha256:…","s":123},…}`), so the
/// later decoding cannot fail; a record in any other shape is decoded at once, as before.
struct RecordFiles: Sendable, Hashable {
    private let box: Box

    init(_ files: [String: FileRecord]) { self.init(FileTable(files)) }

    init(_ table: FileTable) { box = Box(.decoded(table), count: table.count) }

    /// Files listed in path order by the plan that made them: no table is made of them unless
    /// ``table`` is read (a sync only writes them, through ``listing``).
    init(_ listing: FileListing) { box = Box(.listed(listing), count: listing.countPaths()) }

    /// The `files` member, `bytes[member]`, or `nil` when it is not in the shape FreshAir writes.
    /// The record's bytes are kept whole, shared with the caller's array: at 100,000 files a
    /// copy of the member was 11 MB more at the no-change check's peak.
    init?(checked bytes: [UInt8], member: Range<Int>) {
        guard let entries = Self.entriesInWrittenShape(bytes, member) else { return nil }
        box = Box(.encoded(bytes, member), count: entries)
    }

    /// The files, sorted by path, decoded on first use.
    var table: FileTable { box.table }
    /// The files in path order, read from the plan's lists when they came from one.
    var listing: FileListing { box.listing }
    /// The files as a dictionary, made anew at each call: a sync looks paths up in ``table``.
    var value: [String: FileRecord] { box.table.dictionary }
    /// How many files, known without decoding them (a summary's "reused" after a `304`).
    var count: Int { box.count }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.box === rhs.box || lhs.table == rhs.table }
    func hash(into hasher: inout Hasher) { hasher.combine(table) }

    private enum State {
        case encoded([UInt8], Range<Int>)
        case decoded(FileTable)
        case listed(FileListing)
    }

    /// Shared by copies of one record; decoded once, under its lock.
    private final class Box: Sendable {
        private let state: Mutex<State>
        let count: Int
        init(_ state: State, count: Int) {
            self.state = Mutex(state)
            self.count = count
        }

        var table: FileTable {
            state.withLock { state in
                switch state {
                case .decoded(let table): return table
                case .encoded(let bytes, let member):
                    let table = RecordFiles.decode(bytes, member, count: count)
                    state = .decoded(table)
                    return table
                case .listed(let listing):
                    let table = FileTable(sorting: Array(listing))
                    state = .decoded(table)
                    return table
                }
            }
        }

        var listing: FileListing {
            let listed: FileListing? = state.withLock { if case .listed(let listing) = $0 { listing } else { nil } }
            return listed ?? FileListing([FileListing.Run(table)])
        }
    }

    // MARK: The shape FreshAir writes

    /// Where the record's `files` member begins in `bytes` (its `{`) and where the record's own
    /// object ends, when the record is as FreshAir writes it: `files` last, no spaces.
    ///
    /// The first `,"files":{` is that member: a quote inside a JSON string is always escaped,
    /// and the members before it (`id`, `source`, `created`, `previous`, `validators`,
    /// `metadata`) hold strings and numbers only.
    static func split(_ bytes: [UInt8]) -> (filesStart: Int, end: Int)? {
        let marker = Array(#","files":{"#.utf8)
        var end = bytes.count
        while end > 0, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[end - 1]) { end -= 1 }
        guard end >= 2, bytes[end - 1] == UInt8(ascii: "}") else { return nil }
        guard let comma = bytes.withUnsafeBytes({ ByteSearch.firstOffset(of: marker, in: $0) }) else { return nil }
        return (comma + marker.count - 1, end - 1)
    }

    /// How many entries, when `bytes[member]` is `{` entries `}` with every entry
    /// `"path":{"h":"ALGORITHM:HEX","s":DIGITS}`, the path a JSON string of valid UTF-8 and the
    /// hex 40 or 64 digits; `nil` for anything else. Checked without making a string per entry
    /// (only a path with bytes past ASCII is validated as one): a path listed twice (FreshAir
    /// never writes one) is counted twice, and read as its last entry.
    static func entriesInWrittenShape(_ bytes: [UInt8], _ member: Range<Int>) -> Int? {
        precondition(member.lowerBound >= 0 && member.upperBound <= bytes.count)
        return bytes.withUnsafeBufferPointer { bytes in
            var scanner = Scanner(bytes: bytes, in: member)
            guard scanner.take("{") else { return nil }
            if scanner.take("}") { return scanner.atEnd ? 0 : nil }
            var entries = 0
            repeat {
                guard scanner.skipString(), scanner.take(#":{"h":""#), scanner.digest() != nil,
                    scanner.take(#"","s":"#), scanner.digits() != nil, scanner.take("}")
                else { return nil }
                entries += 1
            } while scanner.take(",")
            return scanner.take("}") && scanner.atEnd ? entries : nil
        }
    }

    /// The entries of bytes `entriesInWrittenShape` accepted, in a table: FreshAir writes them
    /// sorted by path, so they are sorted already unless another writer made the record.
    private static func decode(_ bytes: [UInt8], _ member: Range<Int>, count: Int) -> FileTable {
        var files: [FileTable.Entry] = []
        files.reserveCapacity(count)
        bytes.withUnsafeBufferPointer { bytes in
            var scanner = Scanner(bytes: bytes, in: member)
            _ = scanner.take("{")
            guard !scanner.take("}") else { return }
            repeat {
                guard let path = scanner.string(), scanner.take(#":{"h":""#), let hex = scanner.digest(),
                    let hash = ContentHash(hex: String(decoding: bytes[hex], as: UTF8.self)),
                    scanner.take(#"","s":"#), let size = scanner.digits(), scanner.take("}")
                else { break }  // cannot happen: the bytes were checked when the record was read
                files.append(FileTable.Entry(path: path, record: FileRecord(hash: hash, size: size)))
            } while scanner.take(",")
        }
        return FileTable(sorting: consume files)
    }

    /// Reads the record's compact JSON by hand: one pass, no tree. It reads the bytes through a
    /// pointer its caller checked `member` against: a check of 10,000 entries through the array
    /// (a bounds check a byte, a generic comparison a literal) was 7% of a no-change sync.
    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index: Int
        /// Where the scanned member ends: nothing at or past it is read.
        let end: Int

        init(bytes: UnsafeBufferPointer<UInt8>, in member: Range<Int>) {
            self.bytes = bytes
            index = member.lowerBound
            end = member.upperBound
        }

        var atEnd: Bool { index == end }

        mutating func take(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard end - index >= count else { return false }
            let matches = memcmp(bytes.baseAddress! + index, literal.utf8Start, count) == 0
            if matches { index += count }
            return matches
        }

        /// Past a JSON string; an escaped one is read to check its escapes, one with bytes past
        /// ASCII to check they are UTF-8 (everything outside strings is checked to be ASCII).
        mutating func skipString() -> Bool {
            let start = index
            guard let (escaped, ascii) = stringEnd() else { return false }
            if escaped { return (try? JSONReader.parse(bytes[start..<index]))?.string != nil }
            return ascii || String(validating: bytes[start + 1..<index - 1], as: UTF8.self) != nil
        }

        /// A JSON string, unescaped; `nil` when it is not one or not valid UTF-8.
        mutating func string() -> String? {
            let start = index
            guard let (escaped, _) = stringEnd() else { return nil }
            let token = bytes[start..<index]
            guard escaped else { return String(validating: token.dropFirst().dropLast(), as: UTF8.self) }
            return (try? JSONReader.parse(token))?.string
        }

        /// Moves past a JSON string's closing quote; whether it had escapes and whether it is
        /// all ASCII, or `nil` when there is no string here.
        private mutating func stringEnd() -> (escaped: Bool, ascii: Bool)? {
            guard index < end, bytes[index] == UInt8(ascii: "\"") else { return nil }
            var escaped = false
            var ascii = true
            index += 1
            // Eight plain bytes at a time while there are (most of a path), then a byte at a time.
            while end - index >= 8,
                Self.allPlain(UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self))
            {
                index += 8
            }
            while index < end {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return (escaped, ascii)
                }
                if byte < 0x20 { return nil }
                if byte >= 0x80 { ascii = false }
                if byte == UInt8(ascii: "\\") {
                    escaped = true
                    index += 1
                }
                index += 1
            }
            return nil
        }

        /// Whether no byte of `word` ends a string or needs a look: none is a quote, a backslash,
        /// a control character or past ASCII.
        static func allPlain(_ word: UInt64) -> Bool {
            word & EightBytes.high == 0 && EightBytes.below(word, 0x20) == 0
                && EightBytes.below(word ^ EightBytes.repeating(0x22), 1) == 0
                && EightBytes.below(word ^ EightBytes.repeating(0x5C), 1) == 0
        }

        /// `ALGORITHM:HEX` up to the closing quote (not taken): where the hex digits are, 40 or 64.
        mutating func digest() -> Range<Int>? {
            while index < end, bytes[index] != UInt8(ascii: ":") {
                guard (97...122).contains(bytes[index]) || (48...57).contains(bytes[index]) else { return nil }
                index += 1
            }
            guard index < end else { return nil }
            index += 1
            let start = index
            // 40 or 64 digits, then the quote. The digits are checked a word at a time: a branch a
            // digit ("digit or letter?") was most of the time a no-change check spent reading the record.
            // (A SHA-256 has a digit where a SHA-1 ends, so the first quote found is the end.)
            let count =
                if end - start > 40, bytes[start + 40] == UInt8(ascii: "\"") {
                    40
                } else if end - start > 64, bytes[start + 64] == UInt8(ascii: "\"") { 64 } else { 0 }
            guard count > 0, Self.allHex(UnsafeRawPointer(bytes.baseAddress! + start), count: count) else { return nil }
            index = start + count
            return start..<index
        }

        /// Whether the `count` bytes at `start` (a multiple of 8) are all hex digits, checked eight
        /// at a time in one 64-bit word. Swift's `SIMD16` was slower here than a byte at a time.
        static func allHex(_ start: UnsafeRawPointer, count: Int) -> Bool {
            var offset = 0
            while offset < count {
                let word = start.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                guard word & EightBytes.high == 0,  // ASCII
                    EightBytes.within(word, 0x30, 0x39)
                        | EightBytes.within(word | EightBytes.repeating(0x20), 0x61, 0x66)
                        == EightBytes.high  // 0-9, a-f, A-F
                else { return false }
                offset += 8
            }
            return true
        }

        /// Decimal digits that fit an `Int64`.
        mutating func digits() -> Int64? {
            var value: Int64 = 0
            let start = index
            while index < end, (48...57).contains(bytes[index]) {
                let (times, overflow) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times.addingReportingOverflow(Int64(bytes[index] - 48))
                guard !overflow, !overflow2 else { return nil }
                value = sum
                index += 1
            }
            return index > start ? value : nil
        }
    }
}

/// Eight bytes in one 64-bit word, tested all at once: each answer is the top bit of each byte.
/// The tests are exact while every byte is below 0x80 (no carry crosses into the next byte),
/// so a caller checks `word & high == 0` first.
private enum EightBytes {
    static var ones: UInt64 { 0x0101_0101_0101_0101 }
    static var high: UInt64 { ones &* 0x80 }

    /// `byte` in each of the eight places.
    static func repeating(_ byte: UInt64) -> UInt64 { ones &* byte }

    /// The top bit of each byte below `limit`.
    static func below(_ word: UInt64, _ limit: UInt64) -> UInt64 { (word &- repeating(limit)) & ~word & high }

    /// The top bit of each byte at least `low` and not above `top`.
    static func within(_ word: UInt64, _ low: UInt64, _ top: UInt64) -> UInt64 {
        (word &+ repeating(0x80 - low)) & ~(word &+ repeating(0x7F - top)) & high
    }
}
