import Foundation

/// JSON that keeps what an author wrote: key order, key spelling (`sha` or `SHA`) and number
/// text survive a read and a write, so `breeze hash` and `breeze generate` change only the
/// values they mean to.
public indirect enum OrderedJSON: Sendable, Hashable {
    case object([(key: String, value: OrderedJSON)])
    case array([OrderedJSON])
    case string(String)
    /// The number as written (`1.10` stays `1.10`).
    case number(String)
    case bool(Bool)
    case null

    public static func == (lhs: OrderedJSON, rhs: OrderedJSON) -> Bool {
        switch (lhs, rhs) {
        case (.object(let a), .object(let b)): return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.array(let a), .array(let b)): return a == b
        case (.string(let a), .string(let b)), (.number(let a), .number(let b)): return a == b
        case (.bool(let a), .bool(let b)): return a == b
        case (.null, .null): return true
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(serialized(indent: 0))
    }

    /// Parses JSON (strictly; Foundation has checked well-formedness first, so errors carry
    /// line and column).
    public static func parse(_ data: Data) throws -> OrderedJSON {
        _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        var parser = Parser(bytes: [UInt8](data))
        let value = try parser.value()
        return value
    }

    /// The value of `key` in an object.
    public subscript(key: String) -> OrderedJSON? {
        guard case .object(let pairs) = self else { return nil }
        return pairs.first { $0.key == key }?.value
    }

    public var string: String? { if case .string(let text) = self { text } else { nil } }

    /// Sets `key`, in place when it exists, else after `after` (or at the end).
    public mutating func set(_ key: String, _ value: OrderedJSON, after: String? = nil) {
        guard case .object(var pairs) = self else { return }
        if let index = pairs.firstIndex(where: { $0.key == key }) {
            pairs[index].value = value
        } else if let after, let index = pairs.firstIndex(where: { $0.key == after }) {
            pairs.insert((key, value), at: index + 1)
        } else {
            pairs.append((key, value))
        }
        self = .object(pairs)
    }

    /// Writes JSON with `indent` spaces per level (0: one line), one entry per line.
    public func serialized(indent: Int = 2) -> String {
        var output = ""
        write(to: &output, level: 0, indent: indent)
        return output
    }

    private func write(to output: inout String, level: Int, indent: Int) {
        let newline = indent > 0 ? "\n" : ""
        let pad = String(repeating: " ", count: indent * (level + 1))
        let closePad = String(repeating: " ", count: indent * level)
        switch self {
        case .object(let pairs):
            if pairs.isEmpty { output += "{}"; return }
            output += "{" + newline
            for (index, pair) in pairs.enumerated() {
                output += pad + Self.quote(pair.key) + (indent > 0 ? ": " : ":")
                pair.value.write(to: &output, level: level + 1, indent: indent)
                output += (index < pairs.count - 1 ? "," : "") + newline
            }
            output += closePad + "}"
        case .array(let items):
            if items.isEmpty { output += "[]"; return }
            // Short arrays of scalars stay on one line, as people write them.
            if items.allSatisfy({ if case .object = $0 { false } else if case .array = $0 { false } else { true } }) {
                output += "[" + items.map { $0.serialized(indent: 0) }.joined(separator: ", ") + "]"
                return
            }
            output += "[" + newline
            for (index, item) in items.enumerated() {
                output += pad
                item.write(to: &output, level: level + 1, indent: indent)
                output += (index < items.count - 1 ? "," : "") + newline
            }
            output += closePad + "]"
        case .string(let text): output += Self.quote(text)
        case .number(let text): output += text
        case .bool(let value): output += value ? "true" : "false"
        case .null: output += "null"
        }
    }

    static func quote(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 {
                    result += String(format: "\\u%04x", scalar.value)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }

    /// The indentation a document uses (the leading spaces of its first indented line), 2 if none.
    public static func indentation(of data: Data) -> Int {
        // The first line that starts with white space tells; only the document's head is read.
        var atLineStart = false
        var spaces = 0
        for byte in data.prefix(4096) {
            if byte == UInt8(ascii: "\n") {
                atLineStart = true
                spaces = 0
            } else if atLineStart, byte == UInt8(ascii: " ") {
                spaces += 1
            } else if atLineStart, byte == UInt8(ascii: "\t") {
                return 4
            } else if atLineStart {
                if spaces > 0 { return spaces }
                atLineStart = false
            }
        }
        return 2
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
        }

        mutating func value() throws -> OrderedJSON {
            skipSpace()
            guard index < bytes.count else { throw PackagingError("unexpected end of JSON") }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var pairs: [(key: String, value: OrderedJSON)] = []
                skipSpace()
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(pairs) }
                while true {
                    skipSpace()
                    let key = try string()
                    skipSpace()
                    index += 1  // ':'
                    pairs.append((key, try value()))
                    skipSpace()
                    let separator = bytes[index]
                    index += 1
                    if separator == UInt8(ascii: "}") { return .object(pairs) }
                }
            case UInt8(ascii: "["):
                index += 1
                var items: [OrderedJSON] = []
                skipSpace()
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
                while true {
                    items.append(try value())
                    skipSpace()
                    let separator = bytes[index]
                    index += 1
                    if separator == UInt8(ascii: "]") { return .array(items) }
                }
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"): index += 4; return .bool(true)
            case UInt8(ascii: "f"): index += 5; return .bool(false)
            case UInt8(ascii: "n"): index += 4; return .null
            default:
                let start = index
                while index < bytes.count, "+-0123456789.eE".utf8.contains(bytes[index]) { index += 1 }
                return .number(String(decoding: bytes[start..<index], as: UTF8.self))
            }
        }

        mutating func string() throws -> String {
            index += 1  // opening quote
            let start = index
            var escaped = false
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                if bytes[index] == UInt8(ascii: "\\") {
                    escaped = true
                    index += 1
                }
                index += 1
            }
            let raw = bytes[start..<index]
            index += 1
            // Most strings have no escapes; the rest are decoded by Foundation.
            guard escaped else { return String(decoding: raw, as: UTF8.self) }
            let quoted = Data([UInt8(ascii: "\"")] + raw + [UInt8(ascii: "\"")])
            return try JSONSerialization.jsonObject(with: quoted, options: [.fragmentsAllowed]) as? String ?? ""
        }
    }
}
