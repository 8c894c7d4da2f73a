import Foundation
import FreshAir
import Testing

@Suite("The object layout: where a root manifest says its files are, and nowhere else")
struct ContentLayoutTests {
    let sha256 = "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
    let base = URL(string: "https://cdn.example.com/apps/Main.freshair/")!

    func load(_ members: String, files: String? = nil) throws -> Manifest {
        let entries = files ?? #"[{"filename": "a.md", "sha": "\#(sha256)"}]"#
        return try Manifest(
            data: Data(#"{"format": 2, \#(members) "files": \#(entries)}"#.utf8),
            source: "manifest.json"
        )
    }

    @Test("No member, or \"paths\", is the path layout; a legacy array is too")
    func pathsByDefault() throws {
        #expect(try load("").layout == .paths)
        #expect(try load(#""layout": "paths","#).layout == .paths)
        let legacy = try Manifest(data: Data(#"[{"filename": "a.md"}]"#.utf8), source: "manifest.json")
        #expect(legacy.layout == .paths)
        let path = try BundlePath("Child.freshair/a.md")
        #expect(
            ContentLayout.paths.url(for: path, hash: nil, base: base).absoluteString == base.absoluteString
                + "Child.freshair/a.md"
        )
    }

    @Test(
        "A path's URL is the base's with the path percent-encoded where it must be, the same as Foundation appends it",
        arguments: [
            "Child.freshair/a.md", "d000/f00001.bin", "t~/-_.x", "a b/c.txt", "x%y", "é/ü.png", "a?b#c", "s;c=e+f&g",
        ]
    )
    func pathURLs(path: String) throws {
        let bundlePath = try BundlePath(path)
        for base in [
            base, URL(string: "http://127.0.0.1:8080/x/")!, URL(string: "http://h/b/?v=1")!,
            URL(fileURLWithPath: "/srv/Main.freshair", isDirectory: true),
        ] {
            #expect(
                bundlePath.url(relativeTo: base).absoluteString == base.appendingPathComponent(path).absoluteString
            )
        }
        let expected = [
            "a b/c.txt": "a%20b/c.txt", "x%y": "x%25y", "é/ü.png": "%C3%A9/%C3%BC.png", "a?b#c": "a%3Fb%23c",
        ]
        #expect(
            bundlePath.url(relativeTo: base).absoluteString == base.absoluteString + (expected[path] ?? path)
        )
    }

    @Test("\"objects\": files by SHA-256, in objects/ or the relative folder the manifest names")
    func objectURLs() throws {
        let hash = ContentHash(hex: sha256)!
        let path = try BundlePath("Child.freshair/a.md")
        let beside = try load(#""layout": "objects","#).layout
        #expect(beside == .objects(at: "objects/"))
        #expect(
            beside.url(for: path, hash: hash, base: base).absoluteString
                == "https://cdn.example.com/apps/Main.freshair/objects/\(sha256)"
        )
        let shared = try load(#""layout": "objects", "objects": "../store","#).layout
        #expect(shared == .objects(at: "../store/"))
        #expect(
            shared.url(for: path, hash: hash, base: base).absoluteString
                == "https://cdn.example.com/apps/store/\(sha256)"
        )
    }

    @Test(
        "A layout this FreshAir does not know, or an objects folder that leaves the server or hides in encodings, is refused",
        arguments: [
            (#""layout": "chunks","#, "reads \"paths\" and \"objects\""),
            (#""layout": 2,"#, "reads \"paths\" and \"objects\""),
            (#""layout": "objects", "objects": "https://evil.example/","#, "relative folder"),
            (#""layout": "objects", "objects": "//evil.example/x/","#, "relative folder"),
            (#""layout": "objects", "objects": "/objects/","#, "relative folder"),
            (#""layout": "objects", "objects": "a/../../b/","#, "relative folder"),
            (#""layout": "objects", "objects": "%2e%2e/x/","#, "relative folder"),
            (#""layout": "objects", "objects": "x?y=1","#, "relative folder"),
            (#""layout": "objects", "objects": "../","#, "name a folder"),
            (#""layout": "objects", "objects": "","#, "name a folder"),
            (#""layout": "objects", "objects": 7,"#, "name a folder"),
        ]
    )
    func refused(members: String, message: String) throws {
        #expect {
            _ = try load(members)
        } throws: { error in
            guard let error = error as? ManifestError, case .unexpectedShape(let detail) = error.problem else {
                return false
            }
            return detail.contains(message)
        }
    }

    @Test(
        "A device refuses an object-layout manifest that selects a file without a SHA-256 digest, before fetching anything"
    )
    func objectsNeedSHA256() async throws {
        let sha1 = "0beec7b5ea3f0fdbc95d0dd47f3c5bc275da8a33"
        let root = #"{"format": 2, "layout": "objects", "files": [{"filename": "a.md", "sha": "\#(sha1)"}]}"#
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("layout-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("B.freshair"),
            withIntermediateDirectories: true
        )
        try Data(root.utf8).write(to: folder.appendingPathComponent("B.freshair/manifest.json"))
        let sync = BundleSync(
            remote: folder.appendingPathComponent("B.freshair/"),
            store: BundleStore(root: folder.appendingPathComponent("store"))
        )
        await #expect {
            try await sync.run()
        } throws: { error in
            guard let problem = (error as? FreshAirError)?.manifestError?.problem,
                case .entry(_, "a.md", .noSHA256InObjectLayout) = problem
            else { return false }
            return "\(error)".contains("breeze hash --sha256")
        }
    }
}
