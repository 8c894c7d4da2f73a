import Foundation
import Synchronization
import Testing

@testable import FreshAir

/// Paths are bytes: every check splits on 0x2F, whatever Unicode scalars stand around it.
@Suite("Paths are checked on bytes, as the kernel reads them")
struct PathSafetyTests {
    /// Scalars that join a neighbouring `/` into one `Character` (grapheme cluster).
    static let gluing: [(name: String, scalar: String)] = [
        ("prepend U+0600", "\u{600}"), ("combining acute U+0301", "\u{301}"), ("zero-width joiner U+200D", "\u{200D}"),
        ("variation selector U+FE0F", "\u{FE0F}"), ("emoji modifier U+1F3FB", "\u{1F3FB}"),
    ]

    @Test("A '..' component is refused whatever is glued to the '/' beside it", arguments: gluing)
    func dotDotAroundGluingScalars(name: String, scalar: String) {
        for hostile in [
            "../\(scalar)x.txt", "a\(scalar)/../../x.txt", "a/../\(scalar)x", "\(scalar)/../x",
            "x/\(scalar)/../../../y", "../\(scalar)",
        ] {
            #expect(throws: BundlePath.Rejection.self, "\(name): \(hostile.debugEscaped)") { try BundlePath(hostile) }
        }
        // What Character-based code got wrong: the separator is found, so are the components.
        let glued = try? BundlePath("d\(scalar)/pwned.txt")
        #expect(glued?.components.map(String.init) == ["d\(scalar)", "pwned.txt"])
        #expect(glued?.parent?.string == "d\(scalar)")
        #expect(glued?.lastComponent == "pwned.txt")
    }

    @Test("A name that only looks like '..' is an ordinary name, as it is to the kernel")
    func lookalikesAreNames() throws {
        #expect(try BundlePath("..\u{301}/x").components.count == 2)
        #expect(try BundlePath("\u{2025}/x").components.count == 2)  // two-dot leader
        #expect(try BundlePath("a\u{2215}b").components.count == 1)  // division slash is no separator
    }

    @Test("Absolute, empty, control, backslash, over-long and invalid UTF-8 paths are refused")
    func otherRefusals() {
        for hostile in [
            "/etc/passwd", "~/x", "", "a//b", "a/", "a\\b", "a\u{0}b", "a\u{7F}", "a/./b",
            String(repeating: "n", count: 256), String(repeating: "a/", count: 600) + "x",
        ] {
            #expect(throws: BundlePath.Rejection.self, "\(hostile.debugEscaped)") { try BundlePath(hostile) }
        }
        #expect(throws: BundlePath.Rejection.self) { try BundlePath(bytes: [0x61, 0xFF, 0x62]) }
        #expect(throws: BundlePath.Rejection.self) { try BundlePath(bytes: [0x61, 0xC0, 0xAF, 0x62]) }  // overlong '/'
        #expect((try? BundlePath(bytes: Array("caf\u{E9}/x.txt".utf8)))?.components.count == 2)
    }

    @Test("Paths compare as bytes: two spellings of é are two paths")
    func byteEquality() throws {
        let composed = try BundlePath("caf\u{E9}.txt")
        let decomposed = try BundlePath("cafe\u{301}.txt")
        #expect(composed.string == decomposed.string, "Swift's String calls them equal…")
        #expect(composed != decomposed, "…the kernel does not, and neither does BundlePath")
        #expect(Set([composed, decomposed]).count == 2)
    }

    @Test("Names that are one file on an Apple device are refused together")
    func collisions() throws {
        var paths = PathCollisionsKeepingPaths()
        #expect(try paths.insert(BundlePath("Docs/Read.md")))
        #expect(
            try paths.insert(BundlePath("Docs/Read.md")) == false,
            "the same bytes again: a repeat, not a collision"
        )
        #expect(try paths.insert(BundlePath("Docs/other.md")))
        #expect(throws: BundlePath.Rejection.self) { try paths.insert(BundlePath("Docs/read.md")) }
        #expect(throws: BundlePath.Rejection.self) { try paths.insert(BundlePath("docs/new.md")) }  // the folder
        // Lower case first (kept as its own folded spelling), then the same bytes, then a capital.
        #expect(try paths.insert(BundlePath("notes/a.md")))
        #expect(try paths.insert(BundlePath("notes/a.md")) == false)
        #expect(throws: BundlePath.Rejection.self) { try paths.insert(BundlePath("notes/A.md")) }
        #expect(throws: BundlePath.Rejection.self) { try paths.insert(BundlePath("Notes/b.md")) }  // the folder
        #expect(try paths.insert(BundlePath("caf\u{E9}.txt")))
        #expect(throws: BundlePath.Rejection.self) { try paths.insert(BundlePath("cafe\u{301}.txt")) }
        #expect(throws: BundlePath.Rejection.self) { try paths.insert(BundlePath("CAF\u{C9}.TXT")) }
        // Case folding as APFS does it, beyond lowercased(): long s, final sigma, sharp s.
        for (first, second) in [
            ("mi\u{17F}s.txt", "MISS.txt"),
            ("\u{3BB}\u{3CC}\u{3B3}\u{3BF}\u{3C2}", "\u{3BB}\u{3CC}\u{3B3}\u{3BF}\u{3C3}"), ("stra\u{DF}e", "STRASSE"),
        ] {
            var names = PathCollisionsKeepingPaths()
            #expect(try names.insert(BundlePath(first)))
            #expect(throws: BundlePath.Rejection.self, "\(first) and \(second)") {
                try names.insert(BundlePath(second))
            }
        }
    }

    /// Walks a root manifest that has no children (loading one fails).
    func selectRoot(_ manifest: String) async throws {
        let tree = ManifestTree(
            baseURL: URL(string: "http://127.0.0.1/B.freshair/")!,
            environment: ConditionEnvironment(),
            maxDepth: 4
        ) { _, _, _, _ in
            throw CancellationError()
        }
        _ = try await tree.select(root: Data(manifest.utf8), fetched: true)
    }

    @Test("A manifest listing two spellings of one name is refused")
    func manifestCollision() async throws {
        await #expect {
            try await selectRoot(#"[{"filename": "Readme.md"}, {"filename": "README.md"}]"#)
        } throws: { error in
            guard let manifestError = (error as? FreshAirError)?.manifestError, case .unsafePath = manifestError.problem
            else { return false }
            return "\(error)".contains("differ only by case")
        }
    }

    @Test("A name listed as a file and as a folder is refused in either order (a file after its folder was dropped)")
    func fileAndFolderEitherOrder() async throws {
        for manifest in [
            #"[{"filename": "a/b/c"}, {"filename": "a/b"}]"#, #"[{"filename": "a/b"}, {"filename": "a/b/c"}]"#,
            #"[{"filename": "a/b/c"}, {"filename": "a/b"}, {"filename": "a/b"}]"#,
        ] {
            await #expect {
                try await selectRoot(manifest)
            } throws: { error in
                guard case .pathConflict(let file, let folder)? = (error as? FreshAirError)?.manifestError?.problem
                else { return false }
                return file.string == "a/b" && folder.string == "a/b/c"
            }
        }
        // A file repeated is still a repeat, and a folder shared by two files is no conflict.
        var paths = PathCollisionsKeepingPaths()
        #expect(try paths.insert(BundlePath("x/y.txt")))
        #expect(try paths.insert(BundlePath("x/z.txt")))
        #expect(try paths.insert(BundlePath("x/y.txt")) == false)
        #expect(!paths.sawFileThatIsAFolder)
        #expect(try paths.insert(BundlePath("x")))  // a file named as the folder: new, for the walk to refuse
        #expect(paths.sawFileThatIsAFolder)
        #expect(try paths.insert(BundlePath("x")) == false)
    }

    @Test("20,000 '!' and deep parentheses are a clear error, not a stack overflow")
    func conditionNesting() {
        for hostile in [
            String(repeating: "!", count: 20_000) + "a",
            String(repeating: "(", count: 5_000) + "a" + String(repeating: ")", count: 5_000),
            String(repeating: "!(", count: 40) + "a" + String(repeating: ")", count: 40),
        ] {
            #expect(throws: ConditionSyntaxError.self) { try Condition(parsing: hostile) }
        }
        #expect(
            (try? Condition(parsing: String(repeating: "!(", count: 10) + "a" + String(repeating: ")", count: 10)))
                != nil
        )
        let long = (0..<1_000).map { "k\($0) == 1" }.joined(separator: " && ")
        #expect {
            try Condition(parsing: long)
        } throws: { error in
            "\(error)".contains("longer than 4096 bytes")
        }
    }
}

/// The writer that holds even when a check misses.
@Suite("The confined writer never leaves its folder")
struct ConfinedFolderTests {
    let root: URL
    let inside: URL
    let outside: URL

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("confined-\(UUID().uuidString.prefix(8))")
        inside = root.appendingPathComponent("version")
        outside = root.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: inside, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: root) }

    @Test("No write goes through a link, whether it points inside or out")
    func linksAreNeverFollowed() throws {
        defer { cleanUp() }
        let folder = try ConfinedFolder(path: inside.path)
        try FileManager.default.createSymbolicLink(
            atPath: inside.appendingPathComponent("escape").path,
            withDestinationPath: outside.path
        )
        try FileManager.default.createDirectory(
            at: inside.appendingPathComponent("real"),
            withIntermediateDirectories: true
        )
        try FileManager.default.createSymbolicLink(
            atPath: inside.appendingPathComponent("alias").path,
            withDestinationPath: "real"
        )
        try Data("keep".utf8).write(to: outside.appendingPathComponent("victim.txt"))
        try FileManager.default.createSymbolicLink(
            atPath: inside.appendingPathComponent("victim.txt").path,
            withDestinationPath: outside.appendingPathComponent("victim.txt").path
        )

        for path in ["escape/pwned.txt", "alias/x.txt", "escape/deeper/pwned.txt"] {
            #expect(throws: FreshAirError.self, "\(path)") {
                _ = try folder.createFile(BundlePath(path), replacing: false)
            }
            #expect(throws: FreshAirError.self, "\(path)") { try folder.makeFolder(BundlePath(path)) }
        }
        // A final name that is a link: neither created over (O_EXCL) nor truncated through (O_NOFOLLOW).
        #expect(throws: FreshAirError.self) { _ = try folder.createFile(BundlePath("victim.txt"), replacing: false) }
        #expect(throws: FreshAirError.self) { _ = try folder.createFile(BundlePath("victim.txt"), replacing: true) }
        #expect(throws: FreshAirError.self) { try folder.write(Data("x".utf8), at: BundlePath("victim.txt")) }
        #expect(throws: FreshAirError.self) {
            try folder.hardLink(BundlePath("victim.txt"), at: BundlePath("escape/linked"))
        }
        #expect(try String(contentsOf: outside.appendingPathComponent("victim.txt"), encoding: .utf8) == "keep")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path) == ["victim.txt"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: inside.appendingPathComponent("real").path).isEmpty)

        // What is allowed still works: folders made on the way, files in them.
        let file = try folder.createFile(BundlePath("a/b/c.txt"), replacing: false)
        try Data("ok".utf8).withUnsafeBytes { try file.write($0) }
        file.close()
        #expect(try String(contentsOf: inside.appendingPathComponent("a/b/c.txt"), encoding: .utf8) == "ok")
    }

    @Test("Folders kept open take a quarter of the open-file limit, at most 256: a Mac or iOS app starts at 256")
    func openFolderCap() {
        #expect(ConfinedFolder.openFolderCap(openFileLimit: 256) == 64)
        #expect(ConfinedFolder.openFolderCap(openFileLimit: 1024) == 256)
        #expect(ConfinedFolder.openFolderCap(openFileLimit: Int.max) == 256)
        #expect(ConfinedFolder.openFolderCap(openFileLimit: 8) == 4)
        #expect(ConfinedFolder.openFolderCap(openFileLimit: nil) == 16)
    }

    @Test("Without openat2, the component-by-component walk refuses '..', links and empty names itself")
    func fallbackWalk() throws {
        defer { cleanUp() }
        try FileManager.default.createSymbolicLink(
            atPath: inside.appendingPathComponent("escape").path,
            withDestinationPath: outside.path
        )
        let descriptor = open(inside.path, O_RDONLY | O_DIRECTORY)
        defer { close(descriptor) }
        for hostile in ["../outside/x", "escape/x", "a//x", "./x", "escape"] {
            let opened = ConfinedFolder.openComponentByComponent(
                descriptor,
                hostile,
                O_WRONLY | O_CREAT | O_EXCL,
                0o644
            )
            if opened >= 0 { close(opened) }
            #expect(opened < 0, "\(hostile)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
        let fine = ConfinedFolder.openComponentByComponent(descriptor, "x.txt", O_WRONLY | O_CREAT | O_EXCL, 0o644)
        #expect(fine >= 0)
        close(fine)
    }
}

@Suite("Limits a hostile manifest tree cannot pass")
struct ManifestTreeLimitTests {
    @Test("Many large child manifests stop at the tree's byte cap")
    func treeByteCap() async throws {
        let children = (0..<20).map { #"{"filename": "C\#($0).freshair/manifest.json"}"# }.joined(separator: ",")
        let padding = String(repeating: " ", count: 200_000)
        var tree = ManifestTree(
            baseURL: URL(string: "http://127.0.0.1/B.freshair/")!,
            environment: ConditionEnvironment(),
            maxDepth: 4
        ) { _, _, _, _ in
            (Data(("[]" + padding).utf8), true)
        }
        tree.maxTotalBytes = 1 << 20
        await #expect {
            _ = try await tree.select(root: Data("[\(children)]".utf8), fetched: true)
        } throws: { error in
            guard let manifestError = (error as? FreshAirError)?.manifestError,
                case .treeTooLarge(1 << 20) = manifestError.problem
            else { return false }
            return true
        }
        tree.maxTotalBytes = 8 << 20
        let selection = try await tree.select(root: Data("[\(children)]".utf8), fetched: true)
        #expect(selection.files.count == 21)
    }

    @Test("Children loaded at once never hold more than the tree's cap between them, whatever the concurrency")
    func loadsInFlightShareTheCap() async throws {
        let children = (0..<20).map { #"{"filename": "C\#($0).freshair/manifest.json"}"# }.joined(separator: ",")
        let inFlight = Mutex((now: 0, most: 0))
        var tree = ManifestTree(
            baseURL: URL(string: "http://127.0.0.1/B.freshair/")!,
            environment: ConditionEnvironment(),
            maxDepth: 4
        ) { _, _, _, limit in
            inFlight.withLock {
                $0.now += limit
                $0.most = max($0.most, $0.now)
            }
            try await Task.sleep(for: .milliseconds(5))
            inFlight.withLock { $0.now -= limit }
            return (Data("[]".utf8), true)
        }
        tree.concurrency = 8
        tree.maxDocumentBytes = 1 << 20
        tree.maxTotalBytes = 2 << 20
        let selection = try await tree.select(root: Data("[\(children)]".utf8), fetched: true)
        #expect(selection.files.count == 21)
        let most = inFlight.withLock { $0.most }
        #expect(most > 0 && most <= 2 << 20, "\(most) bytes claimed at once")
    }

    @Test("The entries of all manifests of a tree are capped, selected or not")
    func entryCap() async throws {
        let entries = (0..<1_001).map { #"{"filename": "f\#($0)", "condition": "platform == 'none'"}"# }
        let tree = { (cap: Int) in
            var tree = ManifestTree(
                baseURL: URL(string: "http://127.0.0.1/B.freshair/")!,
                environment: ConditionEnvironment(),
                maxDepth: 4
            ) { _, _, _, _ in throw CancellationError() }
            tree.maxEntries = cap
            return tree
        }
        let root = Data("[\(entries.joined(separator: ","))]".utf8)
        await #expect {
            _ = try await tree(1_000).select(root: root, fetched: true)
        } throws: { error in
            guard case .tooManyEntries(1_000) = (error as? FreshAirError)?.manifestError?.problem else { return false }
            return "\(error)".contains("more than 1000 entries")
        }
        #expect(try await tree(1_001).select(root: root, fetched: true).files.count == 1)
    }
}

@Suite("HTTP dates")
struct HTTPDateTests {
    @Test("IMF-fixdate is read on bytes, the obsolete forms through Foundation, nonsense refused")
    func parsing() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("Fri, 01 Jan 2100 00:00:00 GMT") == Date(timeIntervalSince1970: 4_102_444_800))
        #expect(HTTPDate.parse("Thu, 29 Feb 2024 23:59:59 GMT") == Date(timeIntervalSince1970: 1_709_251_199))
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == Date(timeIntervalSince1970: 784_111_777))
        // Before 1970: no file was modified then (and Foundation's calendar turns Julian before 1582).
        for bad in [
            "", "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT x",
            "Sun Nov  6 08:49:37 1318", "Mon, 06 Nov 1318 08:49:37 GMT", "Wed, 31 Dec 1969 23:59:59 GMT",
        ] {
            #expect(HTTPDate.parse(bad) == nil, "\(bad)")
        }
        // Every day of a leap year round-trips through format and parse.
        for day in 0..<366 {
            let date = Date(timeIntervalSince1970: 1_704_067_200 + Double(day) * 86_400 + 45_296)
            #expect(HTTPDate.parse(HTTPDate.format(date)) == date)
        }
    }
}
