import Foundation
import TestSupport
import Testing

@testable import FreshAir

@Suite("ContentHash: a digest held as bytes reads and writes the same hex it always did")
struct ContentHashTests {
    let sha256Hex = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"  // SHA-256 of "test"
    let sha1Hex = "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3"  // SHA-1 of "test"

    @Test("Hex in is hex out, for both lengths; upper case is lowered; the length says the algorithm")
    func hexRoundTrip() throws {
        let sha256 = try #require(ContentHash(hex: sha256Hex))
        #expect(sha256.algorithm == .sha256)
        #expect(sha256.hex == sha256Hex)
        #expect(sha256.bytes.count == 32)
        #expect(sha256 == ContentHash.of(Array("test".utf8), using: .sha256))
        let sha1 = try #require(ContentHash(hex: sha1Hex.uppercased()))
        #expect(sha1.algorithm == .sha1)
        #expect(sha1.hex == sha1Hex)
        #expect(sha1.bytes.count == 20)
        #expect(sha1 == ContentHash.of(Array("test".utf8), using: .sha1))
        #expect(sha1.description == "sha1:" + sha1Hex)
    }

    @Test("Hex read in place gives the digest its bytes give, for random digests of both lengths")
    func hexMatchesBytes() throws {
        var generator = SeededGenerator()
        for _ in 0..<200 {
            for algorithm in [ContentHash.Algorithm.sha1, .sha256] {
                let bytes = (0..<algorithm.size).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let text = bytes.map { String(format: "%02x", $0) }.joined()
                let hash = try #require(ContentHash(hex: text), "seed \(generator.seed)")
                #expect(hash == ContentHash(algorithm: algorithm, digest: bytes), "seed \(generator.seed)")
                #expect(hash.bytes == bytes && hash.hex == text, "seed \(generator.seed)")
                var appended: [UInt8] = [7, 7]
                hash.appendHex(to: &appended)
                #expect(appended == [7, 7] + Array(text.utf8), "seed \(generator.seed)")
            }
        }
    }

    @Test("A digest with one character that is not hex, anywhere, is refused")
    func notHexAnywhere() {
        for length in [40, 64] {
            for position in 0..<length {
                for bad in ["g", "G", "/", ":", "@", "`", " ", "\u{7F}"] {
                    var characters = Array(repeating: Character("a"), count: length)
                    characters[position] = Character(bad)
                    #expect(ContentHash(hex: String(characters)) == nil, "\(bad) at \(position) of \(length)")
                }
            }
        }
    }

    @Test("Every ASCII character at every place reads as the plain rule says; a character of two bytes is refused")
    func everyCharacterEverywhere() {
        for position in 0..<64 {
            for byte in UInt8(0)...0x7F {
                var digits = Array(repeating: UInt8(ascii: "0"), count: 64)
                digits[position] = byte
                let parsed = ContentHash(hex: String(decoding: digits, as: UTF8.self))
                let value: UInt8? =
                    switch byte {
                    case 0x30...0x39: byte - 0x30
                    case 0x61...0x66: byte - 0x61 + 10
                    case 0x41...0x46: byte - 0x41 + 10
                    default: nil
                    }
                guard let value else {
                    #expect(parsed == nil, "\(byte) at \(position)")
                    continue
                }
                var bytes = [UInt8](repeating: 0, count: 32)
                bytes[position / 2] = position % 2 == 0 ? value << 4 : value
                #expect(parsed?.bytes == bytes, "\(byte) at \(position)")
            }
        }
        for position in 0..<63 {
            for character in ["é", "\u{80}"] {
                var text = String(repeating: "0", count: 62)
                text.insert(contentsOf: character, at: text.index(text.startIndex, offsetBy: position))
                #expect(text.utf8.count == 64 && ContentHash(hex: text) == nil, "\(character) at \(position)")
            }
        }
    }

    @Test(
        "Anything but 40 or 64 hex digits is refused",
        arguments: [
            "", "abc", String(repeating: "g", count: 64), String(repeating: "a", count: 63),
            String(repeating: "a", count: 65), " " + String(repeating: "a", count: 39),
        ]
    )
    func refused(_ text: String) {
        #expect(ContentHash(hex: text) == nil)
    }

    @Test(
        "Equal digests are equal and hash alike; a digest differing in its last byte, or a SHA-1 that is a SHA-256's prefix, is not"
    )
    func equality() throws {
        let one = try #require(ContentHash(hex: sha256Hex))
        let same = try #require(ContentHash(hex: sha256Hex.uppercased()))
        let last = try #require(ContentHash(hex: String(sha256Hex.dropLast()) + "9"))
        let prefix = try #require(ContentHash(hex: String(sha256Hex.prefix(40))))
        #expect(one == same)
        #expect(Set([one, same, last, prefix]).count == 3)
        #expect(one != last)
        #expect(one != prefix)
    }

    @Test(
        "Codable keeps its JSON shape: {\"algorithm\", \"hex\"}, and a hex of the wrong length for its algorithm is an error"
    )
    func codable() throws {
        let hash = try #require(ContentHash(hex: sha256Hex))
        let data = try JSONEncoder().encode(hash)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: String])
        #expect(object == ["algorithm": "sha256", "hex": sha256Hex])
        #expect(try JSONDecoder().decode(ContentHash.self, from: data) == hash)
        let mismatched = Data(#"{"algorithm": "sha1", "hex": "\#(sha256Hex)"}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ContentHash.self, from: mismatched) }
    }
}
