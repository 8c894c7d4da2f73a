import Foundation
import TestSupport
import Testing

@testable import FreshAir

@Suite("JSONWriter: strings and numbers written as JSON says, the fast ways included")
struct JSONWriterTests {
    /// JSON's escapes, a byte at a time: what the writer wrote before it learned to append
    /// text with nothing to escape whole.
    static func reference(_ text: String) -> [UInt8] {
        var output = Array("\"".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output += Array(#"\""#.utf8)
            case UInt8(ascii: "\\"): output += Array(#"\\"#.utf8)
            case UInt8(ascii: "\n"): output += Array(#"\n"#.utf8)
            case UInt8(ascii: "\r"): output += Array(#"\r"#.utf8)
            case UInt8(ascii: "\t"): output += Array(#"\t"#.utf8)
            case 0..<0x20: output += Array(String(format: "\\u%04x", byte).utf8)
            default: output.append(byte)
            }
        }
        return output + Array("\"".utf8)
    }

    @Test("Quoted text is the byte-at-a-time escaping's, with and without something to escape, and parses back")
    func quoteMatchesReference() throws {
        var generator = SeededGenerator()
        // Mostly plain path characters, sometimes one that needs an escape, sometimes beyond ASCII.
        let alphabet: [Character] =
            Array("abcXYZ019/._- ") + ["\"", "\\", "\n", "\t", "\u{1}", "\u{1F}", "é", "日", "🙂"]
        for round in 0..<2000 {
            let length = Int.random(in: 0...40, using: &generator)
            let plain = round % 2 == 0
            let text = String(
                (0..<length).map { _ in
                    alphabet[Int.random(in: 0..<(plain ? 14 : alphabet.count), using: &generator)]
                }
            )
            var writer = JSONWriter(indent: 0)
            writer.output = [9]
            writer.quote(text)
            #expect(writer.output == [9] + Self.reference(text), "\(text.debugDescription), seed \(generator.seed)")
            guard case .string(let parsed) = try JSONReader.parse(Array(writer.output.dropFirst())) else {
                Issue.record("\(text.debugDescription) did not parse back as a string")
                continue
            }
            #expect(parsed == text, "seed \(generator.seed)")
        }
    }

    @Test("Decimal numbers are String(_:)'s, at the edges and at random")
    func decimalMatchesString() {
        var generator = SeededGenerator()
        let edges: [Int64] = [0, 1, 9, 10, 99, 100, 1_000_000_007, Int64(Int32.max), Int64.max, -1, Int64.min]
        let random = (0..<2000).map { _ in
            Int64.random(in: 0...Int64.max, using: &generator) >> Int.random(in: 0...62, using: &generator)
        }
        for value in edges + random {
            var writer = JSONWriter(indent: 0)
            writer.output = [9]
            writer.decimal(value)
            #expect(writer.output == [9] + Array(String(value).utf8), "\(value), seed \(generator.seed)")
        }
    }
}
