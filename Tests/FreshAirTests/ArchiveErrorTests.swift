import Foundation
import Testing

@testable import FreshAir

@Suite("An archive's names reach a terminal as text, never as control sequences")
struct ArchiveErrorTests {
    @Test("Control characters in an entry's name and in a message are shown escaped; other text as it is")
    func controlCharactersEscaped() throws {
        let hostile = "a\u{1B}]0;owned\u{07}\u{1B}[2J\u{9B}31m\u{7F}\té.txt"
        // As the extractor meets it: a name with control bytes is an unsafe entry.
        let error = try #require(#expect(throws: ArchiveError.self) { try ArchivePath.sanitize(hostile) })
        let shown = error.description
        #expect(!shown.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "\(shown)")
        #expect(shown.contains(#"a\u{1B}]0;owned\u{7}\u{1B}[2J\u{9B}31m\u{7F}\u{9}é.txt"#), "\(shown)")
        // Wrapped, as a sync reports it, it stays escaped.
        #expect(!"\(FreshAirError.archive(error, package: "http://x/p.tar"))".contains("\u{1B}"))
        #expect(ArchiveError(.corrupt, "bad pax size 1\u{1B}[0m").description == #"bad pax size 1\u{1B}[0m"#)
        #expect(ArchiveError(.truncated, "3 of 9 bytes", entry: "d/é.txt").description == "d/é.txt: 3 of 9 bytes")
    }
}
