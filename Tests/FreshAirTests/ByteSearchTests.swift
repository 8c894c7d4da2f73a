import Testing

@testable import FreshAir

@Suite("ByteSearch: the first occurrence of bytes in a buffer")
struct ByteSearchTests {
    func offset(_ needle: String, in haystack: String) -> Int? {
        Array(haystack.utf8).withUnsafeBytes { ByteSearch.firstOffset(of: Array(needle.utf8), in: $0) }
    }

    @Test("Found at the start, in the middle, at the very end; the first of several; false starts skipped")
    func found() {
        #expect(offset("sig", in: "signatures") == 0)
        #expect(offset("natu", in: "signatures") == 3)
        #expect(offset("res", in: "signatures") == 7)
        #expect(offset("ab", in: "xxabyyab") == 2)
        #expect(offset("aab", in: "aaaab") == 2)
        #expect(offset("\"signatures\"", in: #"{"size":1,"sha":"s","signatures":[]}"#) == 20)
    }

    @Test("Not found: absent, cut off by the end, longer than the buffer, empty, in an empty buffer")
    func notFound() {
        #expect(offset("sig", in: "files") == nil)
        #expect(offset("resx", in: "signatures") == nil)
        #expect(offset("signatures!", in: "signatures") == nil)
        #expect(offset("", in: "signatures") == nil)
        #expect(offset("a", in: "") == nil)
    }

    @Test("Agrees with the standard library's search on every needle of a text with many false starts")
    func agreesWithFirstRange() {
        let text = Array("sssssigsignsignasignatusignaturesignatures,\"s\":\"sha\",s".utf8)
        for start in 0..<text.count {
            for length in 1...min(12, text.count - start) {
                let needle = Array(text[start..<start + length])
                let expected = text.firstRange(of: needle)?.lowerBound
                #expect(text.withUnsafeBytes { ByteSearch.firstOffset(of: needle, in: $0) } == expected)
            }
        }
    }

    @Test("Counts occurrences without overlap, up to a limit: a manifest's entries before they are read")
    func counts() {
        func count(_ needle: String, in haystack: String, limit: Int = .max) -> Int {
            Array(haystack.utf8).withUnsafeBytes { ByteSearch.count(of: Array(needle.utf8), in: $0, limit: limit) }
        }
        #expect(count("aa", in: "aaaaa") == 2)
        #expect(count("ab", in: "abxabyab") == 3)
        #expect(count("ab", in: "abxabyab", limit: 2) == 2)
        #expect(count("ab", in: "") == 0)
        #expect(count("", in: "ab") == 0)
        let manifest = #"[{"filename":"a","sha":"x"},{"filename":"b"},{"condition":"c","filename":"d"}]"#
        #expect(count(#""filename""#, in: manifest) == 3)
    }
}
