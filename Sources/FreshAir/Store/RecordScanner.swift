import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a version record's compact `files` member by hand: one pass, no tree. It reads the bytes through a
/// pointer its caller checked `member` against: a check of 10,000 entries through the array
/// (a bounds check a byte, a generic comparison a literal) was 7% of a no-change sync.
struct RecordScanner {
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

    /// Past one entry in the shape FreshAir writes, `"path":{"h":"ALGORITHM:HEX","s":DIGITS}`,
    /// checked without making a string of its path; `false` when it is not one.
    mutating func skipEntry() -> Bool {
        skipString() && take(#":{"h":""#) && digest() != nil && take(#"","s":"#) && digits() != nil && take("}")
    }

    /// One entry in the shape FreshAir writes, read; `nil` when it is not one.
    mutating func entry() -> FileTable.Entry? {
        guard let path = string(), take(#":{"h":""#), let hex = digest(),
            let hash = ContentHash(hex: String(decoding: bytes[hex], as: UTF8.self)),
            take(#"","s":"#), let size = digits(), take("}")
        else { return nil }
        return FileTable.Entry(path: path, record: FileRecord(hash: hash, size: size))
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

extension RecordScanner {
    /// Reads a record's `files` member, `{` entries `}`, through `read` a piece at a time (up to
    /// `capacity` bytes held), and calls `visit` at each entry; `visit` reads exactly one entry,
    /// or answers `false`. Answers how many entries there are, or `nil` when the member is not
    /// in the shape FreshAir writes, an entry is longer than `capacity`, or `read` fails.
    ///
    /// A record of a large bundle is read in pieces: read whole, it was held from the start of a
    /// sync to its planning, most of a no-change check's heap.
    ///
    /// - Parameter read: fills the buffer from the member's byte at the offset given (an offset
    ///   in `member`'s terms); `false` when it cannot.
    static func walkEntries(
        of member: Range<Int>,
        capacity: Int,
        read: (_ offset: Int, _ into: UnsafeMutableBufferPointer<UInt8>) -> Bool,
        visit: (inout RecordScanner) -> Bool
    ) -> Int? {
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        return walk(member, buffer: buffer, held: 0..<0, read: read, visit: visit)
    }

    /// The same walk over a member held whole, `bytes[member]`: nothing is read or copied.
    static func walkEntries(
        in bytes: UnsafeBufferPointer<UInt8>,
        of member: Range<Int>,
        visit: (inout RecordScanner) -> Bool
    )
        -> Int?
    {
        precondition(member.lowerBound >= 0 && member.upperBound <= bytes.count)
        // All of the member is held: `read` is never called, so the bytes are never written.
        return walk(
            member,
            buffer: UnsafeMutableBufferPointer(mutating: bytes),
            held: member,
            read: { _, _ in false },
            visit: visit
        )
    }

    /// The walk, from `buffer[held]`: the start of the member, read already.
    private static func walk(
        _ member: Range<Int>,
        buffer: UnsafeMutableBufferPointer<UInt8>,
        held: Range<Int>,
        read: (_ offset: Int, _ into: UnsafeMutableBufferPointer<UInt8>) -> Bool,
        visit: (inout RecordScanner) -> Bool
    ) -> Int? {
        let capacity = buffer.count
        // buffer[start..<filled] is read and not yet scanned; `next` is the offset that follows it.
        var (start, filled, next) = (held.lowerBound, held.upperBound, member.lowerBound + held.count)
        var failed = false

        /// Runs `step` on what is buffered; on failure, with more of the member to read and room
        /// to read it, moves the unscanned bytes to the front, reads more, and tries again.
        func attempt(_ step: (inout RecordScanner) -> Bool) -> Bool {
            while true {
                var scanner = RecordScanner(bytes: UnsafeBufferPointer(buffer), in: start..<filled)
                if step(&scanner) {
                    start = scanner.index
                    return true
                }
                guard next < member.upperBound, filled - start < capacity else { return false }
                let kept = filled - start
                if start > 0, kept > 0 {
                    UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(
                        from: buffer.baseAddress! + start,
                        byteCount: kept
                    )
                }
                (start, filled) = (0, kept)
                let wanted = min(capacity - filled, member.upperBound - next)
                guard read(next, UnsafeMutableBufferPointer(rebasing: buffer[filled..<filled + wanted])) else {
                    failed = true
                    return false
                }
                filled += wanted
                next += wanted
            }
        }

        var atEnd: Bool { start == filled && next == member.upperBound }
        guard attempt({ $0.take("{") }) else { return nil }
        if attempt({ $0.take("}") }) { return atEnd ? 0 : nil }
        if failed { return nil }
        var entries = 0
        repeat {
            guard attempt(visit) else { return nil }
            entries += 1
        } while attempt { $0.take(",") }
        return !failed && attempt({ $0.take("}") }) && atEnd ? entries : nil
    }
}
