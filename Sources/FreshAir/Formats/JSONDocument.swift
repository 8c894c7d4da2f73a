import Foundation

/// Where a JSON document could not be read: 1-based line and column, with the parser's
/// own words.
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var detail: String
    public var description: String { "invalid JSON at line \(line), column \(column): \(detail)" }
}

/// Parses JSON with Foundation and turns its "around character N" into line and column,
/// so that an author can find the typo.
enum JSONDocument {
    static func parse(_ data: Data) throws(JSONSyntaxError) -> Any {
        do {
            return try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
            let offset = Self.characterOffset(in: detail) ?? data.count
            let (line, column) = Self.lineAndColumn(of: offset, in: data)
            throw JSONSyntaxError(line: line, column: column, detail: Self.clean(detail))
        }
    }

    /// The offset Foundation reports, in "around character 33" / "at offset 33".
    private static func characterOffset(in detail: String) -> Int? {
        for marker in ["around character ", "around line ", "offset "] {
            guard let range = detail.range(of: marker) else { continue }
            let digits = detail[range.upperBound...].prefix(while: \.isASCIIDigit)
            if marker == "around line " { return nil }  // Already has lines: keep its text.
            return Int(digits)
        }
        return nil
    }

    private static func lineAndColumn(of offset: Int, in data: Data) -> (Int, Int) {
        var line = 1
        var column = 1
        for byte in data.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {  // Count characters, not UTF-8 continuation bytes.
                column += 1
            }
        }
        return (line, column)
    }

    private static func clean(_ detail: String) -> String {
        var text = detail
        if let range = text.range(of: " around character") { text = String(text[..<range.lowerBound]) }
        return text.trimmingCharacters(in: CharacterSet(charactersIn: ". "))
    }
}
