import Crypto
import Foundation

/// The hash a manifest records for a file: SHA-1 (40 hex digits, what the old tool wrote)
/// or SHA-256 (64 hex digits).
package struct ContentHash: Sendable, Hashable, CustomStringConvertible, Codable {
    /// Which function produced the digest.
    package enum Algorithm: String, Sendable, Hashable, Codable {
        /// SHA-1, the original FreshAir manifests' digest (40 hex digits).
        case sha1
        /// SHA-256 (64 hex digits), what `breeze hash --sha256` writes and signatures use.
        case sha256
    }

    /// Which function the digest is of.
    package let algorithm: Algorithm
    /// Lowercase hexadecimal digest.
    package let hex: String

    /// Reads a hex digest; its length says the algorithm. Upper case is accepted and
    /// lowered. Returns `nil` for any other length or a non-hex character.
    package init?(hex text: String) {
        let lowered = text.lowercased()
        guard lowered.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else { return nil }
        switch lowered.utf8.count {
        case 40: algorithm = .sha1
        case 64: algorithm = .sha256
        default: return nil
        }
        hex = lowered
    }

    init(algorithm: Algorithm, digest: some Sequence<UInt8>) {
        self.algorithm = algorithm
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in digest {
            text.append(Self.hexDigits[Int(byte >> 4)])
            text.append(Self.hexDigits[Int(byte & 0x0F)])
        }
        hex = String(decoding: text, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The digest's bytes.
    var bytes: [UInt8] {
        let digits = Array(hex.utf8).map { $0 <= 57 ? $0 - 48 : $0 - 87 }
        return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
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
