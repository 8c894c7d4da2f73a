/// What a `Range` header asks of a file of a known size, as RFC 9110 (14.1.2, 14.2) reads it:
/// the one decision `breeze serve` makes itself instead of leaving it to the file middleware,
/// which answered `bytes=-5` with the first six bytes and `bytes=N-` past the end with a
/// negative `Content-Length`.
package enum ByteRange: Hashable, Sendable {
    /// Answer the whole file (`200`): no range, one the server may ignore (several ranges,
    /// another unit, bad syntax), or nothing to resolve it against.
    case whole
    /// Answer these bytes (`206`), both bounds inside the file.
    case part(ClosedRange<Int64>)
    /// Answer `416` with `Content-Range: bytes */size`: a valid range that starts at or past
    /// the end, or a suffix of zero bytes.
    case unsatisfiable

    /// Resolves `header` (the `Range` field's value) against a file of `size` bytes.
    package static func resolve(_ header: String, size: Int64) -> ByteRange {
        let bytes = header.utf8
        guard bytes.starts(with: "bytes=".utf8) else { return .whole }
        let spec = Substring(header).dropFirst(6).trimmingSpaces
        // Several ranges may be answered with the whole file (RFC 9110, 14.2): static hosting
        // is asked for one range at a time, and a multipart answer helps no client of ours.
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .whole }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            guard let suffix = digits(last) else { return .whole }
            // The last bytes of an empty file are all of it: nothing a 206 could describe.
            guard size > 0 else { return .whole }
            guard suffix > 0 else { return .unsatisfiable }
            return .part(max(0, size - suffix)...(size - 1))
        }
        guard let start = digits(first) else { return .whole }
        let end: Int64
        if last.isEmpty {
            end = Int64.max
        } else {
            guard let value = digits(last), value >= start else { return .whole }
            end = value
        }
        guard start < size else { return .unsatisfiable }
        return .part(start...min(end, size - 1))
    }

    /// A run of ASCII digits as a number; one too large for `Int64` is as good as infinite.
    private static func digits(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int64(text) ?? Int64.max
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}
