import Foundation
import TestSupport
import Testing

@testable import FreshAir

@Suite(
    "A root's files selected as its entries are read: the same files, and the same first error, as from the parsed list"
)
struct RootIntakeTests {
    /// Names that repeat, differ only by case, nest under one another, or are child manifests.
    static let names = [
        "a.txt", "A.txt", "b/c.txt", "b", "B/d.txt", "e.txt", "f/g/h.txt", "x.freshair/manifest.json",
        "y.freshair/manifest.json", "../up.txt",
    ]

    /// A random entry; with `live`, half of them name one of its files: exactly as it is there,
    /// or with another size, another digest, or no size.
    func entry(_ generator: inout some RandomNumberGenerator, live: FileTable = FileTable()) -> String {
        if let file = live.entries.randomElement(using: &generator), Bool.random(using: &generator) {
            let (hash, size) = (file.record.hash.hex, file.record.size)
            return switch Int.random(in: 0..<6, using: &generator) {
            case 0: #"{"filename": "\#(file.path)", "sha": "\#(hash)", "size": \#(size + 1)}"#
            case 1:
                #"{"filename": "\#(file.path)", "sha": "\#(ContentHash.of([2], using: .sha256).hex)", "size": \#(size)}"#
            case 2: #"{"filename": "\#(file.path)", "sha": "\#(hash)"}"#
            default: #"{"filename": "\#(file.path)", "sha": "\#(hash)", "size": \#(size)}"#
            }
        }
        var members = [#""filename": "\#(Self.names.randomElement(using: &generator)!)""#]
        switch Int.random(in: 0..<6, using: &generator) {
        case 0: members.append(#""sha": "\#(ContentHash.of([1], using: .sha256).hex)""#)
        case 1: members.append(#""sha": "\#(ContentHash.of([2], using: .sha1).hex)""#)
        case 2: members.append(#""sha": "not hex""#)
        default: break
        }
        if Bool.random(using: &generator) { members.append(#""size": \#(Int.random(in: 0..<9, using: &generator))"#) }
        switch Int.random(in: 0..<5, using: &generator) {
        case 0: members.append(#""condition": "platform == 'tvOS'""#)
        case 1: members.append(#""condition": "platform == 'iOS'""#)
        default: break
        }
        return "{" + members.shuffled(using: &generator).joined(separator: ", ") + "}"
    }

    func document(
        _ generator: inout some RandomNumberGenerator,
        entries: Int,
        root: Bool,
        live: FileTable = FileTable()
    ) -> String {
        let list = "[" + (0..<entries).map { _ in entry(&generator, live: live) }.joined(separator: ", ") + "]"
        guard root, Bool.random(using: &generator) else { return list }
        let layout = Bool.random(using: &generator) ? #", "layout": "objects""# : ""
        return #"{"format": 2\#(layout), "files": \#(list)}"#
    }

    /// The selected files (path, digest, size) or the error's text.
    func outcome(
        _ root: String,
        children: [String: String],
        whileReading: Bool,
        live: FileTable = FileTable()
    ) async -> String {
        var tree = tree(children: children, live: live)
        tree.selectsWhileReading = whileReading
        do {
            let selection = try await tree.select(root: Data(root.utf8), fetched: true)
            // A file the live version has exactly is listed apart, as its place in the live table.
            let sameAsLive = selection.sameAsLive.map { SelectedFile(live: live.entries[Int($0)]) }
            var lines = (selection.files + sameAsLive).map { "\($0.path) \($0.hash?.hex ?? "-") \($0.size ?? -1)" }
            if !live.isEmpty { lines.sort() }
            return lines.joined(separator: "\n") + "\nlayout \(selection.layout)"
        } catch {
            return "error: \(error)"
        }
    }

    @Test("600 random trees: selected while reading and from the parsed list, every outcome is the same")
    func sameOutcome() async {
        var generator = SeededGenerator()
        var errors = 0
        for _ in 0..<600 {
            let root = document(&generator, entries: Int.random(in: 0..<12, using: &generator), root: true)
            let children = [
                "x.freshair/manifest.json": document(&generator, entries: 3, root: false),
                "y.freshair/manifest.json": document(&generator, entries: 2, root: false),
            ]
            let streamed = await outcome(root, children: children, whileReading: true)
            let parsed = await outcome(root, children: children, whileReading: false)
            #expect(streamed == parsed, "\(root), \(generator)")
            if streamed.hasPrefix("error") { errors += 1 }
        }
        // Both kinds of outcome were compared, not only one.
        #expect(errors > 60 && errors < 540, "\(errors) of 600 failed, \(generator)")
    }

    @Test(
        "600 random trees over a random live version: the files it has exactly are listed apart, and every outcome is the same"
    )
    func sameOutcomeOverALiveVersion() async {
        var generator = SeededGenerator()
        var (errors, apart) = (0, 0)
        for _ in 0..<600 {
            // Some of the names, with the digest and sizes the random entries give some of them.
            let live = FileTable(
                sorting: Self.names.filter { _ in Bool.random(using: &generator) }.map {
                    FileTable.Entry(
                        path: $0,
                        record: FileRecord(
                            hash: .of([1], using: .sha256),
                            size: Int64.random(in: 0..<3, using: &generator)
                        )
                    )
                }
            )
            let root = document(&generator, entries: Int.random(in: 0..<12, using: &generator), root: true, live: live)
            let children = [
                "x.freshair/manifest.json": document(&generator, entries: 3, root: false),
                "y.freshair/manifest.json": document(&generator, entries: 2, root: false),
            ]
            let streamed = await outcome(root, children: children, whileReading: true, live: live)
            let parsed = await outcome(root, children: children, whileReading: false, live: live)
            #expect(streamed == parsed, "\(root), \(generator)")
            if streamed.hasPrefix("error") { errors += 1 }
            if await apartCount(root, children: children, live: live) > 0 { apart += 1 }
        }
        #expect(errors > 60 && errors < 540, "\(errors) of 600 failed, \(generator)")
        #expect(apart > 10, "\(apart) of 600 had files listed apart, \(generator)")
    }

    @Test("A file listed exactly as the live version has it is still found to be a folder of another")
    func folderOfAFileListedApart() async {
        let record = FileRecord(hash: .of([1], using: .sha256), size: 2)
        let live = FileTable(sorting: [FileTable.Entry(path: "b", record: record)])
        for (first, second) in [("b", "b/c.txt"), ("b/c.txt", "b")] {
            let entries = [first, second].map { name in
                name == "b"
                    ? #"{"filename": "b", "sha": "\#(record.hash.hex)", "size": 2}"# : #"{"filename": "\#(name)"}"#
            }
            let root = "[" + entries.joined(separator: ", ") + "]"
            let streamed = await outcome(root, children: [:], whileReading: true, live: live)
            #expect(
                await apartCount(root.replacingOccurrences(of: "b/c.txt", with: "d.txt"), children: [:], live: live)
                    == 1
            )
            #expect(streamed.contains("error") && streamed.contains("b/c.txt"), "\(streamed)")
            #expect(streamed == (await outcome(root, children: [:], whileReading: false, live: live)))
        }
    }

    @Test(
        "Two files that are folders, one listed apart as the live version's: both ways report the same, first in order"
    )
    func firstConflictWhicheverListHoldsIt() async {
        // The tree a CI run found: the root's `b` and `b/c.txt` are exactly as live (listed apart);
        // its child lists `b` and `b/c.txt` too, to fetch. Both name "b", which sorts first.
        let record = { (size: Int64) in FileRecord(hash: .of([1], using: .sha256), size: size) }
        let live = FileTable(sorting: [
            FileTable.Entry(path: "b", record: record(1)), FileTable.Entry(path: "b/c.txt", record: record(0)),
        ])
        let hash = record(0).hash.hex
        let root = """
            [{"filename": "b/c.txt", "sha": "\(hash)", "size": 0}, {"filename": "x.freshair/manifest.json"}, \
            {"filename": "b", "sha": "\(hash)", "size": 1}]
            """
        let children = ["x.freshair/manifest.json": #"[{"filename": "b"}, {"filename": "b/c.txt"}]"#]
        for alone in [
            #"[{"filename": "b/c.txt", "sha": "\#(hash)", "size": 0}]"#,
            #"[{"filename": "b", "sha": "\#(hash)", "size": 1}]"#,
        ] {
            #expect(await apartCount(alone, children: [:], live: live) == 1)  // each is listed apart
        }
        let streamed = await outcome(root, children: children, whileReading: true, live: live)
        #expect(streamed.contains(#""b" is listed as a file and also as a folder of "b/c.txt""#), "\(streamed)")
        #expect(streamed == (await outcome(root, children: children, whileReading: false, live: live)))
    }

    /// How many files a selection while reading lists apart, as the live version's.
    func apartCount(_ root: String, children: [String: String], live: FileTable) async -> Int {
        (try? await tree(children: children, live: live).select(root: Data(root.utf8), fetched: true).sameAsLive.count)
            ?? 0
    }

    /// A tree for an iOS device whose children are `children`'s texts, over `live`.
    func tree(children: [String: String], live: FileTable) -> ManifestTree {
        var tree = ManifestTree(
            baseURL: URL(string: "http://127.0.0.1/B.freshair/")!,
            environment: ConditionEnvironment(["platform": "iOS"]),
            maxDepth: 4
        ) { path, _, _, _ in
            guard let text = children[path.string] else { throw CancellationError() }
            return (Data(text.utf8), true)
        }
        tree.livePaths = live
        return tree
    }

    @Test("A path the live version spells otherwise keeps the manifest's spelling")
    func keepsTheManifestsSpelling() throws {
        let name = "a folder/a name longer than fifteen bytes.txt"
        // The live version has "é" decomposed; the manifest now spells it composed.
        let (decomposed, composed) = (
            "caf\u{65}\u{301} menu, longer than fifteen bytes", "caf\u{e9} menu, longer than fifteen bytes"
        )
        let live = FileTable(sorting: [
            FileTable.Entry(path: name, record: FileRecord(hash: .of([1], using: .sha256), size: 1)),
            FileTable.Entry(path: decomposed, record: FileRecord(hash: .of([2], using: .sha256), size: 1)),
        ])
        let intake = RootIntake(environment: ConditionEnvironment(), files: [], seen: PathCollisions(), livePaths: live)
        let text =
            #"[{"filename": "\#(name)"}, {"filename": "new name, longer than fifteen bytes"}, {"filename": "\#(composed)"}]"#
        _ = try Manifest(data: Data(text.utf8), source: "m", maxEntries: .max, taker: intake)
        #expect(intake.files.map(\.path.string) == [name, "new name, longer than fifteen bytes", composed])
        #expect(intake.sameAsLive.isEmpty)  // no digests listed: nothing is exactly as live
        // Equal as `String`s, not as bytes: the manifest's spelling is kept.
        #expect(Array(intake.files[2].path.string.utf8) == Array(composed.utf8))
    }

    @Test("An entry after the first child manifest is named by its index in the document, however it was read")
    func indexesAfterAChild() async {
        let child = #"[{"filename": "c.txt"}]"#
        let cases = [
            (
                #"[{"filename": "a.txt"}, {"filename": "x.freshair/manifest.json"}, {"filename": "../up.txt", "condition": "platform == 'iOS'"}]"#,
                "entry 2"
            ),
            (
                #"[{"filename": "a.txt", "condition": "platform == 'tvOS'"}, {"filename": "x.freshair/manifest.json"}, {"filename": "b.txt", "sha": "00", "condition": "platform == 'iOS'"}]"#,
                "entry 2"
            ),
            (#"{"layout": "objects", "files": [{"filename": "a.txt"}]}"#, "entry 0"),
            (
                #"{"layout": "objects", "files": [{"filename": "x.freshair/manifest.json", "sha": "\#(ContentHash.of([1], using: .sha256).hex)"}, {"filename": "b.txt"}]}"#,
                "entry 1"
            ),
        ]
        for (root, expected) in cases {
            let streamed = await outcome(root, children: ["x.freshair/manifest.json": child], whileReading: true)
            let parsed = await outcome(root, children: ["x.freshair/manifest.json": child], whileReading: false)
            #expect(streamed == parsed)
            #expect(streamed.contains(expected), "\(streamed)")
        }
    }
}

@Suite("A file that is also a folder, found among sorted neighbours")
struct FileThatIsAFolderTests {
    @Test("2,000 random sets of paths: the first file that is a folder, in folder order, with the first path inside it")
    func matchesBruteForce() {
        var generator = SeededGenerator()
        // The bytes either side of `/` in byte order, so that plain sorting would split them.
        let alphabet = Array("-./0a")
        var found = 0
        for _ in 0..<2_000 {
            var paths: Set<String> = []
            for _ in 0..<Int.random(in: 1...12, using: &generator) {
                let length = Int.random(in: 1...5, using: &generator)
                let path = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
                let parts = path.split(separator: "/", omittingEmptySubsequences: false)
                guard !parts.contains(where: \.isEmpty) else { continue }  // no empty component
                paths.insert(path)
            }
            let list = Array(paths)
            func precedes(_ a: String, _ b: String) -> Bool { ManifestTree.folderOrder(a.utf8, b.utf8) }
            let folders = list.filter { file in list.contains { $0.hasPrefix(file + "/") } }
            let expected = folders.min(by: precedes).map { folder in
                (folder, list.filter { $0.hasPrefix(folder + "/") }.min(by: precedes)!)
            }
            let pair = ManifestTree.firstFileThatIsAFolder(count: list.count) { list[$0].utf8 }
            #expect(
                pair.map { [list[$0.folder], list[$0.inside]] } == expected.map { [$0, $1] },
                "\(list), \(generator)"
            )
            if expected != nil { found += 1 }
        }
        #expect(found > 100 && found < 1_900, "\(found) of 2,000 had one, \(generator)")
    }
}
