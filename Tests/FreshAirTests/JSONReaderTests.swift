import Foundation
import Testing

@testable import FreshAir

@Suite("JSON: one strict reader with line and column, a lenient mode for old hand-written files")
struct JSONReaderTests {
    func parseError(_ text: String, lenient: Bool = false) -> JSONSyntaxError? {
        do {
            _ = try JSONReader.parse(Array(text.utf8), lenient: lenient)
            return nil
        } catch {
            return error
        }
    }

    @Test func valuesKeepOrderTextAndEscapes() throws {
        let value = try JSONReader.parse(
            Array(#"{"b": [1.50, -0, 2e3, true, false, null], "a": "tab\t \u00e9 \ud83d\ude00 \/"}"#.utf8)
        )
        #expect(value.pairs?.map(\.key) == ["b", "a"])
        #expect(value["b"]?.array?.compactMap(\.numberText) == ["1.50", "-0", "2e3"])
        #expect(value["b"]?.array?[0].numberValueText == "1.5")
        #expect(value["b"]?.array?[2].integer == 2000)
        #expect(value["a"]?.string == "tab\t é 😀 /")
        #expect(try JSONReader.parse(Array("\u{FEFF}[1]".utf8)) == [JSONValue(1)])  // a byte-order mark is tolerated
    }

    @Test(arguments: [
        ("[1, 2,]", 1, 7, "expected a value"),
        ("{\"a\": 1,\n \"b\" 2}", 2, 6, "expected ':' after the key \"b\""),
        ("[\"abc", 1, 2, "unterminated string"),
        ("[01]", 1, 2, "cannot start with 0"),
        ("[1.]", 1, 4, "digits after '.'"),
        ("[\"a\\x\"]", 1, 4, "invalid escape"),
        ("[\"\\ud800\"]", 1, 3, "unpaired surrogate"),
        ("[\"a\nb\"]", 1, 4, "control character"),
        ("[tru]", 1, 2, "expected a value"),
        ("{\"a\": 1} x", 1, 10, "after the end"),
        ("", 1, 1, "unexpected end of data"),
        ("{\"a\" = 1}", 1, 6, "expected ':'"),
    ])
    func malformedDocumentsNameLineAndColumn(text: String, line: Int, column: Int, detail: String) throws {
        let error = try #require(parseError(text))
        #expect(error.line == line)
        #expect(error.column == column)
        #expect(error.detail.contains(detail), "\(error)")
    }

    @Test func utf16DocumentsLoadAsFoundationLoadedThem() throws {
        func utf16(_ text: String, bigEndian: Bool) -> [UInt8] {
            text.utf16.flatMap { bigEndian ? [UInt8($0 >> 8), UInt8($0 & 0xFF)] : [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        }
        let text = #"[{"filename": "é.md"}]"#
        // With a mark, and without.
        for bytes in [[0xFF, 0xFE] + utf16(text, bigEndian: false), utf16(text, bigEndian: true)] {
            #expect(try JSONReader.parse(bytes).array?.first?["filename"]?.string == "é.md")
        }
        do {
            _ = try JSONReader.parse([0xFF, 0xFE] + utf16("[1,\n 2,]", bigEndian: false))
            Issue.record("a trailing comma in UTF-16 was accepted")
        } catch {
            #expect(error.line == 2 && error.column == 4)
        }
    }

    @Test func invalidUTF8AndHostileNestingAreRefused() {
        let invalid: [UInt8] = [0x5B, 0x22, 0xC3, 0x28, 0x22, 0x5D]  // ["\xC3("]
        #expect(throws: JSONSyntaxError.self) { try JSONReader.parse(invalid) }
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(parseError(deep)?.detail.contains("nested deeper than 512") == true)
    }

    @Test func lenientModeAcceptsTheOldToolsQuirksOnly() throws {
        let value = try JSONReader.parse(Array(#"{"a" = [1, 2,], "b": {"c": true,},}"#.utf8), lenient: true)
        #expect(value["a"] == [JSONValue(1), JSONValue(2)])
        #expect(value["b"]?["c"] == true)
        #expect(parseError("[,]", lenient: true) != nil)  // a comma needs a value before it
        #expect(parseError("{,}", lenient: true) != nil)
        #expect(parseError(#"{"a": 1,,}"#, lenient: true) != nil)
    }

    @Test func writingRoundTripsAndEscapesControlCharacters() throws {
        let value: JSONValue = .object([
            ("k", .string("a\u{01}\"\\")), ("n", .number("1.10")), ("e", .array([])), ("o", .object([])),
        ])
        let text = value.serialized(indent: 0)
        #expect(text == #"{"k":"a\u0001\"\\","n":1.10,"e":[],"o":{}}"#)
        #expect(try JSONReader.parse(Array(text.utf8)) == value)
        #expect(try JSONReader.parse(value.serializedBytes(indent: 4)) == value)
    }

    @Test func versionRecordsWrittenByTheEarlierEncoderStillLoad() throws {
        // As JSONEncoder wrote them before the store had its own writer: keys in any order, "\/" escapes.
        let old = #"""
            {"previous":1,"validators":{"etag":"\"6b02-15\"","lastModified":"Sat, 21 Nov 2026 23:44:59 GMT"},"created":"2026-11-21T23:44:59Z","source":"http:\/\/127.0.0.1:1\/a.freshair\/","id":2,"metadata":{},"files":{"d\/f.bin":{"s":4096,"h":"sha256:7aa57e7d7e0f6ebfe06e42441569edf352dd5c00d4498d5e19e4a6ea780af3cd"}}}
            """#
        let record = try VersionRecord(json: Array(old.utf8))
        #expect(record.id == 2 && record.previous == 1)
        #expect(record.source == "http://127.0.0.1:1/a.freshair/")
        #expect(record.validators == HTTPValidators(etag: "\"6b02-15\"", lastModified: "Sat, 21 Nov 2026 23:44:59 GMT"))
        #expect(record.created == Date(timeIntervalSince1970: 1_795_304_699))
        #expect(record.files["d/f.bin"]?.size == 4096)
        #expect(try VersionRecord(json: record.jsonBytes) == record)
        #expect(throws: VersionRecordError.self) {
            try VersionRecord(json: Array(#"{"id": 1, "source": "x", "files": {"a": {"h": "md5:00"}}}"#.utf8))
        }
    }

    @Test("A streamed list: each element handed over in order, the tree keeps the rest with that list empty")
    func streamedList() throws {
        var seen: [JSONValue] = []
        let text = #"{"format":2,"files":[{"path":"a","n":[1,2]},"b",3],"other":{"files":[9]},"files":[4]}"#
        let document = try JSONReader.parse(Array(text.utf8), streaming: "files") {
            seen.append($0)
            return true
        }
        #expect(
            seen == [
                .object([("path", .string("a")), ("n", .array([.number("1"), .number("2")]))]), .string("b"),
                .number("3"),
            ]
        )
        #expect(document.pairs?.map(\.key) == ["format", "files", "other", "files"])
        #expect(document.pairs?[1].value == .array([]), "the streamed list is empty in the tree")
        #expect(document["other"]?["files"] == .array([.number("9")]), "a nested member of that name is not streamed")
        #expect(document.pairs?[3].value == .array([.number("4")]), "only the first such member is streamed")

        // A document that is itself an array is the list; a trailing comma only when lenient.
        var items: [JSONValue] = []
        let array = try JSONReader.parse(Array("[1, 2, 3,]".utf8), lenient: true, streaming: "files") {
            items.append($0)
            return true
        }
        #expect(array == .array([]))
        #expect(items == [.number("1"), .number("2"), .number("3")])
        #expect(throws: JSONSyntaxError.self) {
            try JSONReader.parse(Array("[1, 2,]".utf8), streaming: "files") { _ in true }
        }
    }

    @Test("A streamed element comes with where its text ends, so that a mapped file's reader can let go behind it")
    func streamedElementEnds() throws {
        let text = Array(#"{"files": [ {"a": [1, 2]} , "b",3 ], "x": 0}"#.utf8)
        var ends: [Int] = []
        _ = try JSONReader.parse(
            text,
            streaming: "files",
            positioned: { _, end in
                ends.append(end)
                return true
            }
        )
        let expected = ["{\"a\": [1, 2]}", "\"b\"", "3"].map { element in
            text.indices.first { text[$0...].starts(with: Array(element.utf8)) }! + element.utf8.count
        }
        #expect(ends == expected)
    }

    @Test("A streamed list stops when its reader says so, and a syntax error after an element is still one")
    func streamedListStops() {
        var count = 0
        #expect(throws: JSONSyntaxError.self) {
            try JSONReader.parse(Array(#"{"files":[1,2,3,4]}"#.utf8), streaming: "files") { _ in
                count += 1
                return count < 2
            }
        }
        #expect(count == 2, "nothing is read after the element that stopped it")
        var seen = 0
        #expect(throws: JSONSyntaxError.self) {
            try JSONReader.parse(Array(#"{"files":[1,2] "x":1}"#.utf8), streaming: "files") { _ in
                seen += 1
                return true
            }
        }
        #expect(seen == 2)
    }
}
