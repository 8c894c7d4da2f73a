import Foundation
import Testing

@testable import FreshAir

@Suite("Paths as bytes in pages: read back, removed and compacted as a list of strings would be")
struct PathListTests {
    /// Paths of 0 to `pageSize` bytes, some of them multi-byte, so that pages fill unevenly.
    func randomPath(pageSize: Int, using generator: inout some RandomNumberGenerator) -> String {
        let parts = ["a", "bc", "caf\u{e9}", "e\u{301}", "/", "long"]
        var path = ""
        while Bool.random(using: &generator) {
            let next = path + parts.randomElement(using: &generator)!
            guard next.utf8.count <= pageSize else { break }
            path = next
        }
        return path
    }

    @Test("Random lists on small pages: every path, after appends, removals and compaction, as the model has it")
    func matchesAnArrayOfStrings() throws {
        var generator = SeededGenerator()
        for _ in 0..<300 {
            let pageSize = Int.random(in: 4...24, using: &generator)
            var list = PathList(pageSize: pageSize)
            var model: [String] = []
            for _ in 0..<Int.random(in: 0...80, using: &generator) {
                if !model.isEmpty, Int.random(in: 0..<6, using: &generator) == 0 {
                    list.removeLast()
                    model.removeLast()
                } else {
                    let path = randomPath(pageSize: pageSize, using: &generator)
                    list.append(path.utf8)
                    model.append(path)
                }
            }
            #expect(list.count == model.count, "\(generator)")
            #expect(list.strings.map { Array($0.utf8) } == model.map { Array($0.utf8) }, "\(generator)")

            let keep = model.map { _ in Bool.random(using: &generator) }
            list.keep(keep)
            let kept = model.indices.filter { keep[$0] }.map { model[$0] }
            #expect(list.strings.map { Array($0.utf8) } == kept.map { Array($0.utf8) }, "\(generator)")
            // Compacted as appending would have laid them out: appending more reads back too.
            var fresh = PathList(pageSize: pageSize)
            for path in kept { fresh.append(path.utf8) }
            #expect(list == fresh && list.hashValue == fresh.hashValue, "\(generator)")
            let more = randomPath(pageSize: pageSize, using: &generator)
            list.append(more.utf8)
            list.trimRoom()
            #expect(list.strings.map { Array($0.utf8) } == (kept + [more]).map { Array($0.utf8) }, "\(generator)")
            let decoded = try JSONDecoder().decode(PathList.self, from: JSONEncoder().encode(list))
            #expect(decoded == list, "\(generator)")
        }
    }

    @Test("A list of full pages: a path that does not fit starts the next page, and no page outgrows its size")
    func pagesNeverOverflow() {
        var list = PathList(pageSize: 8)
        for path in ["abcde", "fgh", "ijklmnop", "", "q", "rstuvwx", "yz"] { list.append(path.utf8) }
        #expect(list.strings == ["abcde", "fgh", "ijklmnop", "", "q", "rstuvwx", "yz"])
        list.keep([false, true, false, true, true, true, true])
        #expect(list.strings == ["fgh", "", "q", "rstuvwx", "yz"])
    }
}
