import Foundation

/// Text on its way to a terminal, with what a terminal would act on shown as escapes: a file
/// name, key id, `expires` text or bundle name from a server can hold `ESC ]0;…BEL` (which
/// retitles the window), `ESC [2J` (which clears it), a carriage return that overwrites the
/// line, or a right-to-left override that reorders what follows. Every line breeze writes to
/// standard error goes through ``escaped(_:)``, and so do the listings that print names from a
/// destination. JSON output needs nothing more: the encoder escapes controls itself.
enum TerminalText {
    /// `text` with C0 and C1 controls, DEL and Unicode's bidirectional formatting characters
    /// written as `\u{…}`. Line breaks and tabs stay: breeze's own messages list problems one
    /// per line.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Whether a terminal could act on `scalar` rather than show it.
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: false
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// Writes `line` to standard error, escaped, with a line break.
    static func writeError(_ line: String) {
        FileHandle.standardError.write(Data((escaped(line) + "\n").utf8))
    }
}
