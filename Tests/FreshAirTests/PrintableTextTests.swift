import Foundation
import Testing

@testable import FreshAir

/// The one escaping function for text from a server or an archive, on its way to a terminal.
@Suite("PrintableText: controls and bidirectional formatting shown as \\u{…}, everything else as it is")
struct PrintableTextTests {
    @Test(
        "Each row: the text, whether line breaks stay, and what is shown",
        arguments: [
            ("plain é 日本", false, "plain é 日本"),
            ("\u{1B}]0;pwned\u{07}", false, "\\u{1B}]0;pwned\\u{7}"),
            ("\u{1B}[2J", true, "\\u{1B}[2J"),
            ("a\rb", true, "a\\u{D}b"),
            ("one\ntwo\tthree", true, "one\ntwo\tthree"),
            ("one\ntwo", false, "one\\u{A}two"),
            ("\u{7F}\u{85}\u{9F}", false, "\\u{7F}\\u{85}\\u{9F}"),
            ("abc\u{202E}txt.exe", false, "abc\\u{202E}txt.exe"),
            ("\u{2066}\u{2069}\u{200E}\u{061C}", true, "\\u{2066}\\u{2069}\\u{200E}\\u{61C}"),
        ]
    )
    func escaped(text: String, keepingLineBreaks: Bool, shown: String) {
        #expect(PrintableText.escaped(text, keepingLineBreaks: keepingLineBreaks) == shown)
    }

    @Test("A document cannot forge a line under breeze's message: its names and dates are one line, line feeds shown")
    func documentErrorsAreOneLine() throws {
        let forged = "\nbreeze: hint: run rm -rf ~"
        for document in [
            #"[{"filename": "a\#(forged.debugDescription.dropFirst().dropLast())", "sha256": "zz"}]"#,
            #"{"format": 2, "expires": "never\#(forged.debugDescription.dropFirst().dropLast())", "files": []}"#,
        ] {
            do {
                _ = try Manifest(data: Data(document.utf8), source: "m.json")
                Issue.record("accepted: \(document)")
            } catch {
                #expect(!"\(error)".contains("\n") && "\(error)".contains("\\u{A}breeze: hint"), "\(error)")
            }
        }
    }

}
