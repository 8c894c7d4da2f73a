#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a run of bytes first occurs in a buffer, with the C library's `memchr` and `memcmp`.
///
/// Not the standard library's generic `firstRange(of:)`: unspecialized for bytes, it asks the
/// runtime for generic metadata at every step, which dominated planning a large manifest.
enum ByteSearch {
    /// The offset of the first occurrence of `needle` in `haystack`; `nil` when there is none
    /// or `needle` is empty.
    static func firstOffset(of needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> Int? {
        guard let first = needle.first, needle.count <= haystack.count, let base = haystack.baseAddress else {
            return nil
        }
        let lastStart = haystack.count - needle.count
        var offset = 0
        return needle.withUnsafeBytes { pattern -> Int? in
            while offset <= lastStart {
                guard let found = memchr(base + offset, Int32(first), lastStart - offset + 1) else { return nil }
                let candidate = base.distance(to: UnsafeRawPointer(found))
                if memcmp(base + candidate, pattern.baseAddress!, pattern.count) == 0 { return candidate }
                offset = candidate + 1
            }
            return nil
        }
    }

    /// How many times `needle` occurs in `haystack` without overlapping, counting no further
    /// than `limit`.
    static func count(of needle: [UInt8], in haystack: UnsafeRawBufferPointer, limit: Int = .max) -> Int {
        var (found, offset) = (0, 0)
        while found < limit, offset < haystack.count,
            let next = firstOffset(of: needle, in: UnsafeRawBufferPointer(rebasing: haystack[offset...]))
        {
            found += 1
            offset += next + needle.count
        }
        return found
    }
}
