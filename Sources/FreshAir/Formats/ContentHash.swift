import Crypto
import Foundation

/// The hash a manifest records for a file: SHA-1 (40 hex digits, what the old tool wrote)
/// or SHA-256 (64 hex digits).
///
/// The digest is held as its bytes, inline: a bundle's plan and records hold one or two per
/// file, and as hex text each was a string of its own on the heap (about 100 bytes more per
/// hash, and 21 MB of a 100,000-file sync's peak).
package struct ContentHash: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    /// Which function produced the digest.
    package enum Algorithm: String, Sendable, Hashable, Codable {
        /// SHA-1, the original FreshAir manifests' digest (40 hex digits).
        case sha1
        /// SHA-256 (64 hex digits), what `breeze hash --sha256` writes and signatures use.
        case sha256

        /// Bytes in a digest.
        var size: Int { self == .sha1 ? 20 : 32 }
    }

    // The words come first: a digest is then 33 bytes, and a selected file that holds one, a
    // path and a size fits in 64 (it was 72, with the one-byte algorithm padded to 8 before them).
    /// The digest's bytes, big-endian in each word; a SHA-1's last 12 bytes are zero.
    private let words: (UInt64, UInt64, UInt64, UInt64)
    /// Which function the digest is of.
    package let algorithm: Algorithm

    /// Reads a hex digest; its length says the algorithm. Upper case is accepted and
    /// lowered. Returns `nil` for any other length or a non-hex character.
    package init?(hex text: String) {
        // Read in place, eight digits at a time: a manifest of 100,000 files reads as many digests,
        // and copying them first cost several times more.
        var text = text
        let parsed = text.withUTF8 { digits -> (Algorithm, Words)? in
            let algorithm: Algorithm
            switch digits.count {
            case 40: algorithm = .sha1
            case 64: algorithm = .sha256
            default: return nil
            }
            guard let first = Self.word(digits, from: 0), let second = Self.word(digits, from: 16),
                let third = Self.word(digits, from: 32), let fourth = Self.word(digits, from: 48)
            else { return nil }
            return (algorithm, (first, second, third, fourth))
        }
        guard let (algorithm, words) = parsed else { return nil }
        self.init(algorithm: algorithm, words: words)
    }

    /// The up to 16 hex digits from `start` as a word, left-aligned (the first digit highest, as
    /// ``digestWords`` holds a digest's bytes): 0 past the end, `nil` at a non-hex digit. Digests
    /// have 40 or 64 digits, so a word has 16, 8 or none.
    private static func word(_ digits: UnsafeBufferPointer<UInt8>, from start: Int) -> UInt64? {
        switch digits.count - start {
        case 16...:
            guard let high = eight(digits, at: start), let low = eight(digits, at: start + 8) else { return nil }
            return UInt64(high) << 32 | UInt64(low)
        case 8..<16: return eight(digits, at: start).map { UInt64($0) << 32 }
        default: return 0
        }
    }

    /// Eight hex digits from `start`, read as one 64-bit word: no branch per digit, where a
    /// digest's digits are numerals or letters at random, and a branch on which guessed wrong
    /// about one time in three.
    private static func eight(_ digits: UnsafeBufferPointer<UInt8>, at start: Int) -> UInt32? {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let (highBits, lowNibbles) = (ones &* 0x80, ones &* 0x0F)
        // The first digit in the lowest byte, on every machine.
        let text = UInt64(
            littleEndian: UnsafeRawBufferPointer(digits).loadUnaligned(fromByteOffset: start, as: UInt64.self)
        )
        // Each byte below 0x80 (so that adding to it cannot carry into the next), and either
        // "0"..."9" or, lowered, "a"..."f": a byte plus (0x80 - low) has its high bit set when
        // it is at least `low`.
        let lowered = text | (ones &* 0x20)
        let numeral = (text &+ ones &* (0x80 - 0x30)) & ~(text &+ ones &* (0x80 - 0x3A))
        let letter = (lowered &+ ones &* (0x80 - 0x61)) & ~(lowered &+ ones &* (0x80 - 0x67))
        guard text & highBits == 0, (numeral | letter) & highBits == highBits else { return nil }
        // A digit's value: its low four bits, plus 9 for a letter (0x41... and 0x61... have bit 6).
        let values = (text & lowNibbles) &+ ((text >> 6) & ones) &* 9
        // Pairs of digits into bytes, pairs of bytes into 16 bits, then into 32: the first digit
        // highest.
        let bytes = ((values << 4) | (values >> 8)) & 0x00FF_00FF_00FF_00FF
        let halves = ((bytes << 8) | (bytes >> 16)) & 0x0000_FFFF_0000_FFFF
        return UInt32(truncatingIfNeeded: (halves << 16) | (halves >> 32))
    }

    /// Whether `text` is `digits` lowercase hex digits, as digests are written in names
    /// (objects, packs) that must mean one thing only.
    package static func isLowercaseHex(_ text: some StringProtocol, digits: Int) -> Bool {
        text.utf8.count == digits && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    init(algorithm: Algorithm, digest: some Sequence<UInt8>) {
        self.algorithm = algorithm
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { raw in
            for (index, byte) in digest.prefix(32).enumerated() { raw[index] = byte }
        }
        // Each word read as big-endian, so that `byte(_:)` is the same on every machine.
        self.words = (words.0.bigEndian, words.1.bigEndian, words.2.bigEndian, words.3.bigEndian)
    }

    /// The digest's words, as a list that keeps digests as columns holds them (32 bytes, where
    /// a digest with its algorithm takes 40 in an array).
    typealias Words = (UInt64, UInt64, UInt64, UInt64)

    var digestWords: Words { words }

    /// The digest whose words are `words` (from ``digestWords``).
    init(algorithm: Algorithm, words: Words) {
        self.algorithm = algorithm
        self.words = words
    }

    /// The digest's bytes.
    var bytes: [UInt8] { (0..<algorithm.size).map(byte) }

    private func byte(_ index: Int) -> UInt8 {
        let word =
            switch index / 8 {
            case 0: words.0
            case 1: words.1
            case 2: words.2
            default: words.3
            }
        return UInt8(truncatingIfNeeded: word >> (56 - 8 * UInt64(index % 8)))
    }

    /// Lowercase hexadecimal digest.
    package var hex: String {
        String(unsafeUninitializedCapacity: 2 * algorithm.size) { writeHex(into: $0) }
    }

    /// Appends the lowercase hexadecimal digest to `output`, with no string made on the way: a
    /// version record writes one per file.
    func appendHex(to output: inout [UInt8]) {
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: 2 * algorithm.size))
        output.withUnsafeMutableBufferPointer { _ = writeHex(into: UnsafeMutableBufferPointer(rebasing: $0[start...])) }
    }

    /// Writes the 40 or 64 hex digits at the start of `text`; answers how many.
    private func writeHex(into text: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let raw = UnsafeMutableRawBufferPointer(text)
        // Eight digits (four bytes, half a word) at a time: 5 for a SHA-1, 8 for a SHA-256.
        for group in 0..<algorithm.size / 4 {
            let word =
                switch group / 2 {
                case 0: words.0
                case 1: words.1
                case 2: words.2
                default: words.3
                }
            let half = UInt32(truncatingIfNeeded: group % 2 == 0 ? word >> 32 : word)
            raw.storeBytes(of: Self.hexDigits(of: half).bigEndian, toByteOffset: group * 8, as: UInt64.self)
        }
        return 2 * algorithm.size
    }

    /// The eight hex digits of `value` as ASCII, the first digit in the highest byte: each
    /// nibble spread into a byte of its own, then "0" added to each, and 39 more to a letter's.
    private static func hexDigits(of value: UInt32) -> UInt64 {
        var spread = UInt64(value)
        spread = (spread & 0xFFFF_0000) << 16 | spread & 0x0000_FFFF
        spread = (spread & 0x0000_FF00_0000_FF00) << 8 | spread & 0x0000_00FF_0000_00FF
        spread = (spread & 0x00F0_00F0_00F0_00F0) << 4 | spread & 0x000F_000F_000F_000F
        let ones: UInt64 = 0x0101_0101_0101_0101
        let letters = ((spread &+ ones &* 6) >> 4) & ones  // 1 in each byte whose nibble is 10...15
        return spread &+ ones &* 0x30 &+ letters &* 0x27
    }

    package static func == (left: ContentHash, right: ContentHash) -> Bool {
        left.algorithm == right.algorithm && left.words == right.words
    }

    /// An order on digests (SHA-1 before SHA-256, then by bytes), so that equal digests can be
    /// found by sorting rather than in a dictionary.
    package static func < (left: ContentHash, right: ContentHash) -> Bool {
        left.algorithm != right.algorithm ? left.algorithm == .sha1 : left.words < right.words
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(algorithm)
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }

    // Coded as it always was: `{"algorithm": "sha256", "hex": "…"}`.
    private enum CodingKeys: String, CodingKey {
        case algorithm, hex
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let algorithm = try container.decode(Algorithm.self, forKey: .algorithm)
        let text = try container.decode(String.self, forKey: .hex)
        guard let hash = ContentHash(hex: text), hash.algorithm == algorithm else {
            throw DecodingError.dataCorruptedError(
                forKey: .hex,
                in: container,
                debugDescription: "not a \(algorithm) digest in hex"
            )
        }
        self = hash
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(algorithm, forKey: .algorithm)
        try container.encode(hex, forKey: .hex)
    }

    /// The first 4 bytes of the SHA-256 of `bytes`, big-endian: what a `ChunkIndex` records
    /// of a block beside its rolling hash.
    static func prefix32(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var hasher = SHA256()
        hasher.update(bufferPointer: bytes)
        return hasher.finalize().withUnsafeBytes { $0.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
    }

    package var description: String { "\(algorithm):\(hex)" }

    /// Hashes bytes held in memory (manifests, small files).
    package static func of(_ bytes: some Sequence<UInt8>, using algorithm: Algorithm) -> ContentHash {
        var hasher = ContentHasher(algorithm)
        // Data and arrays are hashed where they lie: a 14 MB manifest is not copied to be hashed.
        if bytes.withContiguousStorageIfAvailable({ hasher.update(UnsafeRawBufferPointer($0)) }) == nil {
            hasher.update(Array(bytes))
        }
        return hasher.finalize()
    }
}

/// Hashes a stream of bytes as it arrives, so a download is verified without reading it
/// back from disk.
// swift-crypto's hash functions are values (copy-on-write) but not marked Sendable: a copy
// handed to another thread is independent of the original.
package struct ContentHasher: @unchecked Sendable {
    private enum State {
        case sha1(Insecure.SHA1)
        case sha256(SHA256)
    }

    private var state: State

    /// Starts a digest with `algorithm`.
    package init(_ algorithm: ContentHash.Algorithm) {
        switch algorithm {
        case .sha1: state = .sha1(Insecure.SHA1())
        case .sha256: state = .sha256(SHA256())
        }
    }

    /// Adds `bytes`.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        switch state {
        case .sha1(var hasher):
            hasher.update(bufferPointer: bytes)
            state = .sha1(hasher)
        case .sha256(var hasher):
            hasher.update(bufferPointer: bytes)
            state = .sha256(hasher)
        }
    }

    /// Adds `bytes`.
    package mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest of everything added.
    package func finalize() -> ContentHash {
        switch state {
        case .sha1(let hasher): return ContentHash(algorithm: .sha1, digest: hasher.finalize())
        case .sha256(let hasher): return ContentHash(algorithm: .sha256, digest: hasher.finalize())
        }
    }
}
