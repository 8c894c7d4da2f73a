extension JSONValue {
    /// The document as UTF-8: `indent` spaces per level (0: one line), one entry per line;
    /// arrays of scalars stay on one line, as people write them.
    package func serializedBytes(indent: Int = 2) -> [UInt8] {
        var writer = JSONWriter(indent: indent)
        writer.write(self, level: 0)
        return writer.output
    }

    /// The document as text; see ``serializedBytes(indent:)``.
    package func serialized(indent: Int = 2) -> String {
        String(decoding: serializedBytes(indent: indent), as: UTF8.self)
    }

    /// The indentation a document uses (the leading spaces of its first indented line), 2 if none.
    package static func indentation(of data: some Collection<UInt8>) -> Int {
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
}

/// Appends JSON text to a byte buffer.
struct JSONWriter {
    let indent: Int
    var output: [UInt8] = []

    /// - Parameter capacity: the bytes to reserve, for a document whose size is known roughly.
    init(indent: Int, capacity: Int = 4096) {
        self.indent = indent
        output.reserveCapacity(capacity)
    }

    mutating func newline(level: Int) {
        guard indent > 0 else { return }
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * level))
    }

    mutating func write(_ value: JSONValue, level: Int) {
        switch value {
        case .object(let pairs):
            guard !pairs.isEmpty else { return output.append(contentsOf: "{}".utf8) }
            output.append(UInt8(ascii: "{"))
            for (index, pair) in pairs.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(level: level + 1)
                quote(pair.key)
                output.append(UInt8(ascii: ":"))
                if indent > 0 { output.append(UInt8(ascii: " ")) }
                write(pair.value, level: level + 1)
            }
            newline(level: level)
            output.append(UInt8(ascii: "}"))
        case .array(let items):
            guard !items.isEmpty else { return output.append(contentsOf: "[]".utf8) }
            let scalars = items.allSatisfy {
                if case .object = $0 { false } else if case .array = $0 { false } else { true }
            }
            output.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { output.append(contentsOf: scalars && indent > 0 ? ", ".utf8 : ",".utf8) }
                if !scalars { newline(level: level + 1) }
                write(item, level: level + 1)
            }
            if !scalars { newline(level: level) }
            output.append(UInt8(ascii: "]"))
        case .string(let text): quote(text)
        case .number(let text): output.append(contentsOf: text.utf8)
        case .bool(let flag): output.append(contentsOf: flag ? "true".utf8 : "false".utf8)
        case .null: output.append(contentsOf: "null".utf8)
        }
    }

    mutating func quote(_ text: String) {
        output.append(UInt8(ascii: "\""))
        // Most text needs no escape (a version record's 100,000 paths, say): appended whole.
        var text = text
        let plain = text.withUTF8 { bytes in
            guard !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                return false
            }
            output.append(contentsOf: bytes)
            return true
        }
        if plain { return output.append(UInt8(ascii: "\"")) }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\n"): output.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): output.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): output.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                output.append(contentsOf: #"\u00"#.utf8)
                output.append(Self.hexDigits[Int(byte >> 4)])
                output.append(Self.hexDigits[Int(byte & 0xF)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `value` in decimal, with no string made on the way.
    mutating func decimal(_ value: Int64) {
        guard value >= 0 else { return output.append(contentsOf: String(value).utf8) }
        var rest = UInt64(value)
        var room: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes; the largest value has 19 digits
        withUnsafeMutableBytes(of: &room) { room in
            var start = room.count
            repeat {
                start -= 1
                room[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            output.append(contentsOf: room[start...])
        }
    }
}
