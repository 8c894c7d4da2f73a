import TestSupport
import Testing

@testable import FreshAir

@Suite("Paths ordered by their NFC bytes: one total order, spellings of one name equal")
struct PathOrderTests {
    @Test("The pair String's < cannot order: a decomposed name before a longer composed one")
    func stringsBlindSpot() {
        let (decomposed, composed) = ("-/e\u{301}", "-/\u{e9}.")
        #expect(PathOrder.compare(decomposed, composed) < 0)
        #expect(PathOrder.compare(composed, decomposed) > 0)
        #expect(PathOrder.compare("caf\u{e9}", "cafe\u{301}") == 0)
        #expect(PathOrder.compare("a", "b") < 0 && PathOrder.compare("ab", "a") > 0 && PathOrder.compare("", "") == 0)
    }

    @Test("Random names, composed and decomposed: antisymmetric, transitive, equal exactly when String says so")
    func totalOrder() {
        let alphabet: [Character] = [
            "a", "Z", "/", ".", "\u{e9}", "e\u{301}", "\u{1100}\u{1161}", "\u{ac00}", "ß", "\u{212b}",
        ]
        var generator = SeededGenerator()
        func name() -> String {
            String(
                (0..<Int.random(in: 0...4, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            )
        }
        for _ in 0..<3_000 {
            let (a, b, c) = (name(), name(), name())
            let (ab, ba) = (PathOrder.compare(a, b), PathOrder.compare(b, a))
            #expect(ab.signum() == -ba.signum(), "\(a.debugDescription) \(b.debugDescription), \(generator)")
            #expect((ab == 0) == (a == b), "\(a.debugDescription) \(b.debugDescription), \(generator)")
            if ab < 0, PathOrder.compare(b, c) < 0 { #expect(PathOrder.compare(a, c) < 0, "\(generator)") }
        }
    }
}
