/// Reads JSON into `JSONValue` in one pass over the bytes.
///
/// Strict by default (RFC 8259: no trailing commas, no comments, valid UTF-8, nesting capped
/// so hostile input cannot exhaust the stack). `lenient` accepts what hand-written files of
/// the old tool contain: a trailing comma before `]` or `}`, and `"key" = value` as in
/// property lists. Errors carry line and column.
package enum JSONReader {
    /// Deeper nesting than this is refused.
    package static let maximumDepth = 512

    /// Parses `bytes` strictly (RFC 8259), or with `lenient` the old tool's quirks too
    /// (a trailing comma, `"key" = value`); the result keeps member order and number text.
    package static func parse(
        _ bytes: some Collection<UInt8>,
        lenient: Bool = false
    ) throws(JSONSyntaxError) -> JSONValue {
        if let utf8 = transcodedFromUTF16(bytes) {
            return try utf8.withUnsafeBufferPointer { parse(buffer: $0, lenient: lenient) }.get()
        }
        let result: Result<JSONValue, JSONSyntaxError>? = bytes.withContiguousStorageIfAvailable { buffer in
            parse(buffer: buffer, lenient: lenient)
        }
        if let result { return try result.get() }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { parse(buffer: $0, lenient: lenient) }.get()
    }

    /// Parses `bytes` as ``parse(_:lenient:)`` does, but hands each element of the document's
    /// list (the document itself when it is an array, else its first member named `key` when
    /// that is an array) to `element` as soon as it is read, and keeps none of them: in the
    /// tree returned, that list is empty. A manifest of 100,000 entries is never a tree of
    /// 100,000 values at once (37 MB of them). `element` answers `false` to stop reading; the
    /// parse then throws, and the caller reports what made it stop.
    package static func parse(
        _ bytes: some Collection<UInt8>,
        lenient: Bool = false,
        streaming key: String,
        _ element: (JSONValue) -> Bool
    ) throws(JSONSyntaxError) -> JSONValue {
        try parse(bytes, lenient: lenient, streaming: key, positioned: { value, _ in element(value) })
    }

    /// Parses as ``parse(_:lenient:streaming:_:)`` does, and tells `element` also where the
    /// element's text ends in `bytes`: the reader of a mapped file lets go of what lies before.
    package static func parse(
        _ bytes: some Collection<UInt8>,
        lenient: Bool = false,
        streaming key: String,
        positioned element: (JSONValue, _ end: Int) -> Bool
    ) throws(JSONSyntaxError) -> JSONValue {
        try withoutActuallyEscaping(element) { element throws(JSONSyntaxError) in
            let stream = Stream(key: key, element: element)
            if let utf8 = transcodedFromUTF16(bytes) {
                return try utf8.withUnsafeBufferPointer { parse(buffer: $0, lenient: lenient, stream: stream) }.get()
            }
            let result: Result<JSONValue, JSONSyntaxError>? = bytes.withContiguousStorageIfAvailable { buffer in
                parse(buffer: buffer, lenient: lenient, stream: stream)
            }
            if let result { return try result.get() }
            let copy = Array(bytes)
            return try copy.withUnsafeBufferPointer { parse(buffer: $0, lenient: lenient, stream: stream) }.get()
        }
    }

    /// The list whose elements are handed over as they are read, and to what.
    private struct Stream {
        let key: String
        let element: (JSONValue, _ end: Int) -> Bool
    }

    /// UTF-16 text (with a byte-order mark, or told by the zero bytes of its ASCII start, as
    /// Foundation's reader did) as UTF-8; `nil` for anything else.
    private static func transcodedFromUTF16(_ bytes: some Collection<UInt8>) -> [UInt8]? {
        let head = Array(bytes.prefix(2))
        guard head.count == 2, head[0] == 0 || head[1] == 0 || head == [0xFF, 0xFE] || head == [0xFE, 0xFF] else {
            return nil
        }
        let bigEndian = head == [0xFE, 0xFF] || (head[0] == 0 && head[1] != 0)
        let hasMark = head == [0xFF, 0xFE] || head == [0xFE, 0xFF]
        guard head != [0, 0] else { return nil }  // UTF-32 or not text: leave it to the parser's error
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var iterator = bytes.dropFirst(hasMark ? 2 : 0).makeIterator()
        while let first = iterator.next() {
            let second = iterator.next() ?? 0
            units.append(bigEndian ? UInt16(first) << 8 | UInt16(second) : UInt16(second) << 8 | UInt16(first))
        }
        return Array(String(decoding: units, as: UTF16.self).utf8)
    }

    private static func parse(
        buffer: UnsafeBufferPointer<UInt8>,
        lenient: Bool,
        stream: Stream? = nil
    ) -> Result<JSONValue, JSONSyntaxError> {
        var parser = Parser(bytes: buffer, lenient: lenient)
        parser.stream = stream
        do throws(JSONSyntaxError) {
            // A UTF-8 byte-order mark is tolerated, as Foundation does.
            if buffer.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }
            let value = try parser.value(depth: 0, streams: stream != nil)
            parser.skipSpace()
            guard parser.index == buffer.count else {
                throw parser.failure("unexpected text after the end of the document")
            }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        let lenient: Bool
        var index = 0
        /// Whose elements go to a closure instead of the tree; `nil` once a list was streamed.
        var stream: Stream?

        init(bytes: UnsafeBufferPointer<UInt8>, lenient: Bool) {
            self.bytes = bytes
            self.lenient = lenient
        }

        func failure(_ detail: String, at offset: Int? = nil) -> JSONSyntaxError {
            JSONSyntaxError(offset: offset ?? index, in: bytes, detail: detail)
        }

        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x0A, 0x0D, 0x09: index += 1
                default: return
                }
            }
        }

        /// The next significant byte, or an "unexpected end" error naming what was expected.
        mutating func peek(expecting what: String) throws(JSONSyntaxError) -> UInt8 {
            skipSpace()
            guard index < bytes.count else { throw failure("unexpected end of data; expected \(what)") }
            return bytes[index]
        }

        /// - Parameter streams: this value, if it is an array, is the list to stream (or, for
        ///   the document, an object whose member may be).
        mutating func value(depth: Int, streams: Bool = false) throws(JSONSyntaxError) -> JSONValue {
            guard depth < JSONReader.maximumDepth else {
                throw failure("nested deeper than \(JSONReader.maximumDepth) levels")
            }
            switch try peek(expecting: "a value") {
            case UInt8(ascii: "{"): return try object(depth: depth, streamsMember: streams && depth == 0)
            case UInt8(ascii: "[") where streams && stream != nil: return try streamedArray(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            case let byte: throw failure("unexpected \(Self.describe(byte)); expected a value")
            }
        }

        mutating func object(depth: Int, streamsMember: Bool = false) throws(JSONSyntaxError) -> JSONValue {
            index += 1  // {
            var pairs: [(key: String, value: JSONValue)] = []
            if try peek(expecting: "a key or '}'") == UInt8(ascii: "}") {
                index += 1
                return .object(pairs)
            }
            while true {
                let next = try peek(expecting: "a key")
                if next == UInt8(ascii: "}"), lenient, !pairs.isEmpty {
                    index += 1  // trailing comma
                    return .object(pairs)
                }
                guard next == UInt8(ascii: "\"") else {
                    throw failure("unexpected \(Self.describe(next)); expected a key in double quotes")
                }
                let key = try string()
                let colon = try peek(expecting: "':'")
                guard colon == UInt8(ascii: ":") || (lenient && colon == UInt8(ascii: "=")) else {
                    throw failure("unexpected \(Self.describe(colon)); expected ':' after the key \"\(key)\"")
                }
                index += 1
                pairs.append((key, try value(depth: depth + 1, streams: streamsMember && key == stream?.key)))
                let separator = try peek(expecting: "',' or '}'")
                index += 1
                if separator == UInt8(ascii: "}") { return .object(pairs) }
                guard separator == UInt8(ascii: ",") else {
                    throw failure("unexpected \(Self.describe(separator)); expected ',' or '}'", at: index - 1)
                }
            }
        }

        mutating func array(depth: Int) throws(JSONSyntaxError) -> JSONValue {
            index += 1  // [
            var items: [JSONValue] = []
            if try peek(expecting: "a value or ']'") == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            while true {
                if lenient, !items.isEmpty, try peek(expecting: "a value") == UInt8(ascii: "]") {
                    index += 1  // trailing comma
                    return .array(items)
                }
                items.append(try value(depth: depth + 1))
                let separator = try peek(expecting: "',' or ']'")
                index += 1
                if separator == UInt8(ascii: "]") { return .array(items) }
                guard separator == UInt8(ascii: ",") else {
                    throw failure("unexpected \(Self.describe(separator)); expected ',' or ']'", at: index - 1)
                }
            }
        }

        /// An array whose elements go to the stream's closure, one by one, as ``array(depth:)``
        /// reads them; answers an empty array.
        mutating func streamedArray(depth: Int) throws(JSONSyntaxError) -> JSONValue {
            guard let element = stream?.element else { return try array(depth: depth) }
            stream = nil  // only the first such list
            index += 1  // [
            if try peek(expecting: "a value or ']'") == UInt8(ascii: "]") {
                index += 1
                return .array([])
            }
            var count = 0
            while true {
                if lenient, count > 0, try peek(expecting: "a value") == UInt8(ascii: "]") {
                    index += 1  // trailing comma
                    return .array([])
                }
                let start = index
                guard element(try value(depth: depth + 1), index) else { throw failure("stopped", at: start) }
                count += 1
                let separator = try peek(expecting: "',' or ']'")
                index += 1
                if separator == UInt8(ascii: "]") { return .array([]) }
                guard separator == UInt8(ascii: ",") else {
                    throw failure("unexpected \(Self.describe(separator)); expected ',' or ']'", at: index - 1)
                }
            }
        }

        mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
            let count = word.utf8CodeUnitCount
            let matches =
                index + count <= bytes.count
                && (0..<count).allSatisfy { bytes[index + $0] == word.utf8Start[$0] }
            guard matches else { throw failure("unexpected \(Self.describe(bytes[index])); expected a value") }
            index += count
        }

        mutating func number() throws(JSONSyntaxError) -> String {
            let start = index
            func digits() -> Int {
                let first = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                return index - first
            }
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            let leadingZero = index < bytes.count && bytes[index] == UInt8(ascii: "0")
            let integerDigits = digits()
            guard integerDigits > 0 else { throw failure("a number needs digits after '-'") }
            guard !leadingZero || integerDigits == 1 else { throw failure("a number cannot start with 0", at: start) }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw failure("a number needs digits after '.'") }
            }
            if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard digits() > 0 else { throw failure("a number needs digits in its exponent") }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        }

        mutating func string() throws(JSONSyntaxError) -> String {
            let open = index
            index += 1  // "
            let start = index
            // The common case: no escapes, so the bytes are the text.
            var highBits: UInt8 = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let raw = UnsafeBufferPointer(rebasing: bytes[start..<index])
                    index += 1
                    // ASCII is valid UTF-8 as it stands. `String(validating:)` is generic over
                    // the encoding, and looked up its types' metadata on each of a manifest's
                    // 30,000 strings.
                    if highBits < 0x80 { return String(decoding: raw, as: UTF8.self) }
                    guard let text = String(validating: raw, as: UTF8.self) else {
                        throw failure("invalid UTF-8 in a string", at: start)
                    }
                    return text
                }
                highBits |= byte
                if byte == UInt8(ascii: "\\") { break }
                if byte < 0x20 { throw failure("a control character must be escaped in a string") }
                index += 1
            }
            var decoded = Array(bytes[start..<index])
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    guard let text = String(validating: decoded, as: UTF8.self) else {
                        throw failure("invalid UTF-8 in a string", at: start)
                    }
                    return text
                case UInt8(ascii: "\\"):
                    try escape(into: &decoded)
                case 0..<0x20:
                    throw failure("a control character must be escaped in a string")
                default:
                    decoded.append(byte)
                    index += 1
                }
            }
            throw failure("unterminated string", at: open)
        }

        mutating func escape(into decoded: inout [UInt8]) throws(JSONSyntaxError) {
            let start = index
            index += 1  // backslash
            guard index < bytes.count else { throw failure("unterminated string") }
            let code = bytes[index]
            index += 1
            switch code {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(code)
            case UInt8(ascii: "b"): decoded.append(0x08)
            case UInt8(ascii: "f"): decoded.append(0x0C)
            case UInt8(ascii: "n"): decoded.append(0x0A)
            case UInt8(ascii: "r"): decoded.append(0x0D)
            case UInt8(ascii: "t"): decoded.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    // A high surrogate must be followed by an escaped low one.
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                        bytes[index + 1] == UInt8(ascii: "u")
                    else {
                        throw failure("unpaired surrogate \\u\(String(scalar, radix: 16))", at: start)
                    }
                    index += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else {
                        throw failure("unpaired surrogate \\u\(String(scalar, radix: 16))", at: start)
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let unicode = Unicode.Scalar(scalar) else {
                    throw failure("invalid escape \\u\(String(scalar, radix: 16))", at: start)
                }
                decoded.append(contentsOf: UTF8.encode(unicode)!)
            default:
                throw failure("invalid escape '\\\(Self.describe(code))'", at: start)
            }
        }

        mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
            guard index + 4 <= bytes.count else { throw failure("\\u needs four hex digits") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw failure("\\u needs four hex digits")
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }

        static func describe(_ byte: UInt8) -> String {
            (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
        }
    }
}
