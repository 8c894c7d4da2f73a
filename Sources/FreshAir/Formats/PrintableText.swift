/// Text from a server or an archive, shown as text: what a terminal or a log viewer would act on
/// instead (C0 and C1 controls, DEL, Unicode's bidirectional formatting characters) written as
/// `\u{…}`. A name holding `ESC ]0;…BEL` would retitle a terminal, `ESC [2J` clear it, a
/// carriage return overwrite the line, a right-to-left override reorder what follows. The one
/// escaping function for every such string, in the library's messages and in breeze's output.
package enum PrintableText {
    /// `text` with every character ``needsEscape(_:keepingLineBreaks:)`` names escaped.
    /// `keepingLineBreaks`: line feeds and tabs stay (messages that list problems a line each).
    package static func escaped(_ text: String, keepingLineBreaks: Bool = false) -> String {
        let escape = { (scalar: Unicode.Scalar) in needsEscape(scalar, keepingLineBreaks: keepingLineBreaks) }
        guard text.unicodeScalars.contains(where: escape) else { return text }
        var shown = ""
        shown.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            if escape(scalar) {
                shown += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }

    /// Whether a terminal could act on `scalar` rather than show it.
    package static func needsEscape(_ scalar: Unicode.Scalar, keepingLineBreaks: Bool = false) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: !keepingLineBreaks
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
