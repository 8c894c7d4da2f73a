import Foundation

/// The order of a version's paths in its table, its record and the lists a sync merges: by the
/// bytes of each path's NFC spelling. Two spellings of one name (canonically equivalent, as
/// `String` has it) are equal, and any two paths compare one way.
///
/// `String`'s own `<` is not that order across normalizations: `"-/e\u{301}"` (decomposed) and
/// `"-/\u{e9}."` are neither less, greater nor equal with Swift 6.3, so a table sorted with it
/// could miss a decomposed path in a binary search, or keep it twice.
enum PathOrder {
    /// Negative, zero or positive as `left` sorts before, with or after `right`.
    static func compare(_ left: String, _ right: String) -> Int {
        var (left, right) = (left, right)
        return left.withUTF8 { left in right.withUTF8 { right in compare(left, right) } }
    }

    /// Negative, zero or positive as the path whose UTF-8 bytes are `left` sorts before, with or
    /// after `right`'s.
    static func compare(_ left: some Collection<UInt8>, _ right: some Collection<UInt8>) -> Int {
        // Bytes below 0xCC encode only scalars below U+0300, where the combining marks begin: such
        // a path is its own NFC spelling, and UTF-8's byte order is the scalars' order. Most
        // paths (ASCII, Latin) take this way.
        guard !isNFCByItsBytes(left) || !isNFCByItsBytes(right) else { return bytewise(left, right) }
        return bytewise(nfc(left), nfc(right))
    }

    private static func isNFCByItsBytes(_ bytes: some Collection<UInt8>) -> Bool { bytes.allSatisfy { $0 < 0xCC } }

    private static func nfc(_ bytes: some Collection<UInt8>) -> [UInt8] {
        Array(String(decoding: bytes, as: UTF8.self).precomposedStringWithCanonicalMapping.utf8)
    }

    private static func bytewise(_ left: some Collection<UInt8>, _ right: some Collection<UInt8>) -> Int {
        for (leftByte, rightByte) in zip(left, right) where leftByte != rightByte {
            return leftByte < rightByte ? -1 : 1
        }
        return left.count - right.count
    }
}
