import Foundation
import FreshAir

/// Text on its way to a terminal, with what a terminal would act on shown as escapes: a file
/// name, key id, `expires` text or bundle name from a server can hold `ESC ]0;…BEL` (which
/// retitles the window), `ESC [2J` (which clears it), a carriage return that overwrites the
/// line, or a right-to-left override that reorders what follows. Every line breeze writes to
/// standard error goes through ``escaped(_:)``, and so do the listings that print names from a
/// destination. JSON output needs nothing more: the encoder escapes controls itself.
enum TerminalText {
    /// `text` with controls and bidirectional formatting characters written as `\u{…}`
    /// (FreshAir's ``PrintableText``, the one escaping function). Line breaks and tabs stay:
    /// breeze's own messages list problems one per line.
    static func escaped(_ text: String) -> String {
        PrintableText.escaped(text, keepingLineBreaks: true)
    }

    /// Writes `line` to standard error, escaped, with a line break.
    static func writeError(_ line: String) {
        FileHandle.standardError.write(Data((escaped(line) + "\n").utf8))
    }
}
