import Foundation

/// Reads the hand-written JSON of older content: trailing commas before `]` or `}` and
/// NSDictionary-style `"key" = value` pairs (as in the old `presentation.json` example) are
/// accepted; anything else must be JSON. Errors keep their line and column.
enum LenientJSON {
    static func parse(_ data: Data) throws(JSONSyntaxError) -> Any {
        do {
            return try JSONDocument.parse(data)
        } catch {
            // Only repair when plain JSON fails, and report the original position if repair fails too.
            guard let repaired = repair(data), let value = try? JSONDocument.parse(repaired) else { throw error }
            return value
        }
    }

    /// Drops trailing commas and turns `=` between a key and its value into `:`, outside strings.
    /// Replacements keep the length so nothing else moves.
    static func repair(_ data: Data) -> Data? {
        var bytes = [UInt8](data)
        var inString = false
        var escaped = false
        var lastComma: Int?
        for index in bytes.indices {
            let byte = bytes[index]
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
                lastComma = nil
            case UInt8(ascii: ","):
                lastComma = index
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                if let comma = lastComma { bytes[comma] = UInt8(ascii: " ") }
                lastComma = nil
            case UInt8(ascii: "="):
                bytes[index] = UInt8(ascii: ":")
                lastComma = nil
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                break
            default:
                lastComma = nil
            }
        }
        return Data(bytes)
    }
}
