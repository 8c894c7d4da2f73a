import TestSupport
import Testing

@testable import FreshAir

/// The set as it was (a `Set` of folded names and a map of the other spellings), against which
/// the compact one is checked.
private struct ReferenceCollisions {
    var folded: Set<String> = []
    var spellings: [String: BundlePath] = [:]
    var foldersOnly: Set<String> = []

    func earlier(_ key: String) -> BundlePath? {
        if let found = folded.firstIndex(of: key) { return BundlePath(trusted: folded[found]) }
        return spellings[key]
    }

    func contains(_ path: BundlePath) -> Bool { earlier(PathCollisions.folded(path.string)) == path }

    /// `nil` for a collision, which records nothing.
    mutating func insert(_ path: BundlePath) -> Bool? {
        var current: BundlePath? = path
        var new: [BundlePath] = []
        while let entry = current {
            let key = PathCollisions.folded(entry.string)
            if let earlier = earlier(key) {
                guard earlier == entry else { return nil }
                if new.isEmpty { return foldersOnly.remove(entry.string) != nil }
                break
            }
            new.append(entry)
            current = entry.parent
        }
        for (index, entry) in new.enumerated() {
            let key = PathCollisions.folded(entry.string)
            if key.utf8.elementsEqual(entry.string.utf8) { folded.insert(entry.string) } else { spellings[key] = entry }
            if index > 0 { foldersOnly.insert(entry.string) }
        }
        return true
    }
}

@Suite("The compact set of names answers as the set of strings it replaced")
struct PathCollisionsOracleTests {
    @Test(
        "Random paths of names that differ by case, normalization and folding, files and folders alike; a file that is also a folder is seen"
    )
    func sameAnswers() throws {
        try Self.compare(sorted: false)
    }

    @Test(
        "The same, each round's paths in sorted order, as manifests list them: a path in the folder of the one before is checked as any"
    )
    func sameAnswersSorted() throws {
        try Self.compare(sorted: true)
    }

    /// Inserts random paths into both sets, in the order drawn or sorted, and compares every
    /// answer.
    static func compare(sorted: Bool) throws {
        let names = [
            "a", "A", "b", "Read.md", "read.md", "caf\u{e9}", "cafe\u{301}", "CAF\u{c9}", "stra\u{df}e", "strasse",
            "\u{3c3}", "\u{3c2}",
        ]
        var generator = SeededGenerator()
        for _ in 0..<300 {
            var compact = PathCollisionsKeepingPaths()
            var reference = ReferenceCollisions()
            var kept: [String] = []
            let drawn = try (0..<Int.random(in: 1...40, using: &generator)).map { _ in
                let depth = Int.random(in: 1...3, using: &generator)
                return try BundlePath(
                    (0..<depth).map { _ in names.randomElement(using: &generator)! }.joined(separator: "/")
                )
            }
            // Sorted by bytes, as `breeze generate` writes them.
            for path in sorted ? drawn.sorted(by: { $0.string.utf8.lexicographicallyPrecedes($1.string.utf8) }) : drawn
            {
                let expected = reference.insert(path)
                let answer: Bool?
                do { answer = try compact.insert(path) } catch { answer = nil }
                // After a collision too: neither recorded any name of the path refused.
                #expect(answer == expected, "\(path.string.debugDescription), \(generator)")
                if answer == true { kept.append(path.string) }
                // Set exactly when one kept path is a folder of another, whichever came first.
                let clash = kept.contains { file in kept.contains { $0.hasPrefix(file + "/") } }
                #expect(compact.sawFileThatIsAFolder == clash, "\(kept), \(generator)")
                let probe = try BundlePath(names.randomElement(using: &generator)!)
                #expect(
                    compact.contains(probe) == reference.contains(probe),
                    "\(probe.string.debugDescription), \(generator)"
                )
            }
        }
    }
}
