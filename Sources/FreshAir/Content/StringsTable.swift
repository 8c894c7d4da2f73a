package import Foundation

/// A table of localized strings: a `.strings` file (UTF-8, or UTF-16 with a byte-order mark;
/// `/* */` and `//` comments; `\"`, `\\`, `\n`, `\t`, `\r`, `\U00E9` escapes), or one language
/// of an `.xcstrings` string catalog.
package struct StringsTable: Sendable, Hashable {
    /// Every key and its text.
    package var strings: [String: String]

    /// A table of `strings`.
    package init(strings: [String: String]) {
        self.strings = strings
    }

    /// A `.strings` file that could not be read, with the line where reading stopped.
    package struct SyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The file that could not be read.
        package var source: String
        /// Where, 1-based.
        package var line: Int
        /// What is wrong.
        package var message: String
        package var description: String { "\(source): line \(line): \(message)" }
    }

    /// Parses a `.strings` file.
    package init(stringsFile data: Data, source: String) throws(SyntaxError) {
        guard let text = Self.decode(data) else {
            throw SyntaxError(source: source, line: 1, message: "not UTF-8, nor UTF-16 with a byte-order mark")
        }
        var parser = StringsParser(characters: Array(text.unicodeScalars), source: source)
        strings = try parser.parse()
    }

    /// Reads one language from an `.xcstrings` catalog. A key with no translation for
    /// `language` is left out, so lookup falls through to the next localization.
    package init(catalog data: Data, language: String, source: String) throws(ManifestError) {
        let document: JSONValue
        do { document = try JSONReader.parse(data) } catch {
            throw ManifestError(source: source, problem: .invalidJSON(error))
        }
        guard let entries = document["strings"]?.pairs else {
            throw ManifestError(source: source, problem: .unexpectedShape("expected a string catalog with \"strings\""))
        }
        let sourceLanguage = document["sourceLanguage"]?.string
        var strings: [String: String] = [:]
        for (key, entry) in entries {
            let localizations = entry["localizations"]
            if let unit = localizations?[language], let value = Self.value(of: unit) {
                strings[key] = value
            } else if language == sourceLanguage, entry["shouldTranslate"]?.bool != false || localizations == nil {
                strings[key] = key  // In the source language a key without a unit is its own text.
            }
        }
        self.strings = strings
    }

    /// A `stringUnit` value, or the `other` case of a plural variation.
    private static func value(of localization: JSONValue) -> String? {
        if let unit = localization["stringUnit"] { return unit["value"]?.string }
        if let other = localization["variations"]?["plural"]?["other"] { return value(of: other) }
        return nil
    }

    static func decode(_ data: Data) -> String? {
        let bytes = [UInt8](data.prefix(3))
        if bytes.starts(with: [0xFF, 0xFE]) { return String(data: data.dropFirst(2), encoding: .utf16LittleEndian) }
        if bytes.starts(with: [0xFE, 0xFF]) { return String(data: data.dropFirst(2), encoding: .utf16BigEndian) }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return String(data: data.dropFirst(3), encoding: .utf8) }
        return String(data: data, encoding: .utf8)
    }
}

/// `"key" = "value";` pairs, old-style property-list syntax.
private struct StringsParser {
    let characters: [Unicode.Scalar]
    let source: String
    var index = 0
    var line = 1

    init(characters: [Unicode.Scalar], source: String) {
        self.characters = characters
        self.source = source
    }

    mutating func parse() throws(StringsTable.SyntaxError) -> [String: String] {
        var strings: [String: String] = [:]
        while true {
            try skipSpaceAndComments()
            guard index < characters.count else { return strings }
            let key = try token("a key")
            try skipSpaceAndComments()
            if peek == ";" {  // `"key";` means the key is its own value.
                index += 1
                strings[key] = key
                continue
            }
            try expect("=")
            try skipSpaceAndComments()
            let value = try token("a value")
            // A forgotten ';' is found on the next line; the line to fix is the value's.
            let valueLine = line
            try skipSpaceAndComments()
            guard peek == ";" else {
                let found = peek.map { line > valueLine ? ", found '\($0)' on line \(line)" : ", found '\($0)'" }
                throw StringsTable.SyntaxError(
                    source: source,
                    line: valueLine,
                    message: "expected ';' after the value of \"\(key)\"" + (found ?? " before the end")
                )
            }
            index += 1
            strings[key] = value
        }
    }

    private var peek: Unicode.Scalar? { index < characters.count ? characters[index] : nil }

    private func fail(_ message: String) -> StringsTable.SyntaxError {
        StringsTable.SyntaxError(source: source, line: line, message: message)
    }

    private mutating func expect(_ symbol: Unicode.Scalar) throws(StringsTable.SyntaxError) {
        guard peek == symbol else {
            throw fail("expected '\(symbol)'" + (peek.map { ", found '\($0)'" } ?? " before the end"))
        }
        index += 1
    }

    private mutating func skipSpaceAndComments() throws(StringsTable.SyntaxError) {
        while let character = peek {
            if character == "\n" {
                line += 1
                index += 1
            } else if character.properties.isWhitespace {
                index += 1
            } else if character == "/", index + 1 < characters.count, characters[index + 1] == "*" {
                index += 2
                while index + 1 < characters.count, !(characters[index] == "*" && characters[index + 1] == "/") {
                    if characters[index] == "\n" { line += 1 }
                    index += 1
                }
                guard index + 1 < characters.count else { throw fail("unterminated comment") }
                index += 2
            } else if character == "/", index + 1 < characters.count, characters[index + 1] == "/" {
                while let next = peek, next != "\n" { index += 1 }
            } else {
                return
            }
        }
    }

    private mutating func token(_ what: String) throws(StringsTable.SyntaxError) -> String {
        guard let first = peek else { throw fail("expected \(what) before the end") }
        if first != "\"" {
            var text = ""
            while let character = peek,
                character.properties.isAlphabetic || ("0"..."9").contains(character)
                    || "_.$-:/".unicodeScalars.contains(character)
            {
                text.unicodeScalars.append(character)
                index += 1
            }
            guard !text.isEmpty else { throw fail("expected \(what), found '\(first)'") }
            return text
        }
        index += 1
        var text = ""
        while let character = peek {
            index += 1
            switch character {
            case "\"":
                return text
            case "\\":
                guard let escaped = peek else { throw fail("unterminated string") }
                index += 1
                switch escaped {
                case "n": text += "\n"
                case "t": text += "\t"
                case "r": text += "\r"
                case "0": text += "\0"
                case "U", "u":
                    let digits = String(String.UnicodeScalarView(characters[index..<min(index + 4, characters.count)]))
                    guard digits.count == 4, let value = UInt32(digits, radix: 16), let scalar = Unicode.Scalar(value)
                    else {
                        throw fail("bad \\U escape")
                    }
                    text.unicodeScalars.append(scalar)
                    index += 4
                default: text.unicodeScalars.append(escaped)
                }
            default:
                if character == "\n" { line += 1 }
                text.unicodeScalars.append(character)
            }
        }
        throw fail("unterminated string")
    }
}
