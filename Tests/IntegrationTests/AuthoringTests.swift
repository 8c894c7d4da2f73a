import BreezeKit
import Foundation
import FreshAir
import Testing

@Suite("Breeze for content authors")
struct AuthoringTests {
    let work: TemporaryFolder
    init() throws { work = try TemporaryFolder("authoring") }

    func write(_ path: String, _ text: String) throws {
        let url = work.path(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    func manifest(_ path: String) throws -> [[String: Any]] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: work.path(path))) as! [[String: Any]]
    }

    func entry(_ entries: [[String: Any]], _ filename: String) -> [String: Any]? {
        entries.first { $0["filename"] as? String == filename }
    }

    @Test("breeze init writes a starter bundle that validates and syncs")
    func initValidates() async throws {
        let run = try await BreezeBinary.run(["init", work.path("Starter.freshair").path])
        #expect(run.status == 0, "\(run.error)")
        let problems = await BundleValidator.run(bundle: work.path("Starter.freshair"))
        #expect(problems.isEmpty, "\(problems)")
        var french = ConditionEnvironment()
        french["locale"] = "fr_FR"
        french["displayScale"] = 2
        let planned = try await LocalBundle.selection(folder: work.path("Starter.freshair"), environment: french).map(
            \.path
        )
        #expect(
            planned == [
                "manifest.json", "Resources/welcome@2x.png", "en.lproj/Feature.strings", "fr.lproj/Feature.strings",
                "release_notes.json",
            ]
        )
    }

    @Test("breeze init prints the release command of the quick start, which a shell runs as printed, quotes included")
    func initPrintsARunnableNextStep() async throws {
        let breeze = try BreezeBinary.path
        let run = try await BreezeBinary.run(["init", work.path("Our 'Content'.freshair").path])
        #expect(run.status == 0, "\(run.error)")
        let release = try #require(
            run.output.split(separator: "\n").first { $0.hasPrefix("  breeze release ") },
            "\(run.output)"
        )
        #expect(run.output.contains("`breeze keygen release.key` once"), "\(run.output)")
        _ = try await BreezeBinary.run(["keygen", work.path("release.key").path])
        let command = release.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "breeze ", with: "")
        try await shell("'\(breeze)' \(command)", in: work.url)
        #expect(FileManager.default.fileExists(atPath: work.path("site/Our 'Content'.freshair/manifest.json").path))
    }

    @Test(
        "breeze init inside the served folder, or in the folder it is run in: the printed steps publish outside the bundle",
        arguments: [
            (made: "site/Inner.freshair", runIn: "", site: "public"),
            (made: ".", runIn: "Here.freshair", site: "../site"),
        ]
    )
    func initNextStepsOutsideTheBundle(made: String, runIn: String, site: String) async throws {
        let breeze = try BreezeBinary.path
        let folder = work.path(runIn)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let printed = try await shell("'\(breeze)' init \(made)", in: folder)
        let lines = printed.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let keygen = try #require(lines.first { $0.hasPrefix("Next: edit it") }, "\(printed)")
        let release = try #require(lines.first { $0.hasPrefix("breeze release ") }, "\(printed)")
        let name = folder.appendingPathComponent(made).standardizedFileURL.lastPathComponent
        #expect(release.contains(" \(site)/\(name) "), "\(release)")
        #expect(printed.contains("`breeze serve \(site)` serves it"), "\(printed)")
        // Run as printed: the key lands outside the bundle, and the release goes through.
        let key = try #require(keygen.split(separator: "`").dropFirst().first, "\(keygen)")
        _ = try await shell("'\(breeze)' \(key.replacingOccurrences(of: "breeze ", with: ""))", in: folder)
        _ = try await shell("'\(breeze)' \(release.replacingOccurrences(of: "breeze ", with: ""))", in: folder)
        let published = folder.appendingPathComponent("\(site)/\(name)/manifest.json").standardizedFileURL
        #expect(FileManager.default.fileExists(atPath: published.path), "\(printed)")
    }

    @Test("The follow-up commands release and publish print run in a shell as printed, quotes and options included")
    func followUpsRunAsPrinted() async throws {
        let breeze = try BreezeBinary.path
        // Every `breeze …` a text names, as the shell would run it from `folder`.
        func printed(_ text: String) -> [String] {
            text.split(separator: "`").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
                .filter { $0.hasPrefix("breeze ") }
        }
        func runAsPrinted(_ command: String) async throws -> String {
            try await shell("'\(breeze)' \(command.dropFirst("breeze ".count))", in: work.url)
        }
        _ = try await shell("'\(breeze)' init Ours.freshair && '\(breeze)' keygen 'my key.key'", in: work.url)
        let first = try await shell(
            "'\(breeze)' release Ours.freshair 'site dir/Ours.freshair' --key 'my key.key'",
            in: work.url
        )
        let renew = try #require(printed(first).first { $0.hasPrefix("breeze release --renew") }, "\(first)")
        #expect(renew.hasSuffix("site dir/Ours.freshair' --key 'my key.key'"), "\(renew)")
        #expect(try await runAsPrinted(renew).contains("Renewed sequence 1"))

        // An older signed copy published over the live release: refused, with the revert to run instead.
        _ = try await shell("cp -R Ours.freshair Old.freshair", in: work.url)
        try write("Ours.freshair/new.txt", "new")
        _ = try await shell(
            "'\(breeze)' release Ours.freshair 'site dir/Ours.freshair' --key 'my key.key'",
            in: work.url
        )
        _ = try await shell("'\(breeze)' sign Old.freshair --key 'my key.key' --identity Ours.freshair", in: work.url)
        let refused = try await BreezeBinary.run([
            "publish", work.path("Old.freshair").path, work.path("site dir/Ours.freshair").path,
        ])
        #expect(refused.status == 65, "\(refused.error)")
        let revert = try #require(printed(refused.error).first { $0.hasPrefix("breeze revert") }, "\(refused.error)")
        // publish takes no key, so the revert names the one placeholder it cannot know.
        #expect(revert.hasSuffix(" --key KEY_FILE"), "\(revert)")
        let reverted = try await runAsPrinted(revert.replacingOccurrences(of: "KEY_FILE", with: "'my key.key'"))
        #expect(reverted.contains("sequence"), "\(reverted)")
        let live = try Data(contentsOf: work.path("site dir/Ours.freshair/manifest.json"))
        #expect(!String(decoding: live, as: UTF8.self).contains("new.txt"), "the revert restored the release before")
    }

    @Test("breeze init never overwrites an author's files: a folder that holds anything is refused, untouched")
    func initRefusesAFolderWithFiles() async throws {
        try write("Mine.freshair/en.lproj/Feature.strings", "\"welcome.title\" = \"Hello\";\n")
        let run = try await BreezeBinary.run(["init", work.path("Mine.freshair").path])
        #expect(run.status == 73, "\(run.status): \(run.error)")
        #expect(run.error.contains("is not empty") && run.error.contains("breeze generate"), "\(run.error)")
        #expect(work.path("Mine.freshair/en.lproj/Feature.strings").text == "\"welcome.title\" = \"Hello\";\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path("Mine.freshair").path) == ["en.lproj"])
        // An empty folder is fine.
        try FileManager.default.createDirectory(at: work.path("Empty.freshair"), withIntermediateDirectories: true)
        #expect(try await BreezeBinary.run(["init", work.path("Empty.freshair").path]).status == 0)
    }

    @Test(
        "generate, package and repo add name at once every file name devices would refuse (case, normalization, control characters, backslashes), and write nothing"
    )
    func namesDevicesRefuse() async throws {
        let names = ["Logo.png", "logo.png", "tab\tname.txt", "back\\slash.txt", "cafe\u{301}.txt", "caf\u{E9}.txt"]
        // Written by their bytes: Foundation would compare the two cafés as one name.
        for (index, name) in names.enumerated() {
            try write("N.freshair/fine.txt", "fine")
            let path = work.path("N.freshair").path + "/" + name
            #expect(FileManager.default.createFile(atPath: path, contents: Data("\(index)".utf8)))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path("N.freshair").path).count == 7)
        for arguments in [
            ["generate", work.path("N.freshair").path],
            ["package", work.path("N.freshair").path, "-o", work.path("n.tgz").path],
            ["repo", "add", work.path("N.freshair").path, work.path("repo/main").path],
            ["release", work.path("N.freshair").path, work.path("site/N.freshair").path],
        ] {
            let run = try await BreezeBinary.run(arguments)
            #expect(run.status == 65, "\(arguments[0]): \(run.status) \(run.error)")
            #expect(run.error.contains("4 file names in"), "\(arguments[0]): \(run.error)")
            for said in [
                #""logo.png" and "Logo.png" differ only by case"#,
                #""tab\u{9}name.txt": it contains a control character"#,
                #""back\slash.txt": it contains a backslash"#,
                "\"cafe\u{301}.txt\" and \"caf\u{E9}.txt\" differ only by Unicode normalization",
            ] {
                #expect(run.error.contains(said), "\(arguments[0]) does not say \(said): \(run.error)")
            }
        }
        for written in ["N.freshair/manifest.json", "n.tgz", "repo", "site"] {
            #expect(!FileManager.default.fileExists(atPath: work.path(written).path), "\(written) was written")
        }
    }

    @Test(
        "Hidden files (.git, .env) are never listed, packed or published: publish left them out, so devices failed on them"
    )
    func hiddenFilesLeftOut() async throws {
        try write("H.freshair/a/z.txt", "z")
        try write("H.freshair/.env", "SECRET=1")
        try write("H.freshair/.git/config", "[core]")
        try write("H.freshair/a/.hidden/inner.txt", "inner")
        let generated = try await BreezeBinary.run(["generate", work.path("H.freshair").path])
        #expect(generated.status == 0, "\(generated.error)")
        #expect(try manifest("H.freshair/manifest.json").compactMap { $0["filename"] as? String } == ["a/z.txt"])
        // A file added gets its first digest: not counted as one updated. A file edited is.
        #expect(generated.output.hasSuffix("1 added, 0 removed, 0 digests updated.\n"), "\(generated.output)")
        try write("H.freshair/a/z.txt", "edited")
        let edited = try await BreezeBinary.run(["generate", work.path("H.freshair").path])
        #expect(edited.output.hasSuffix("0 added, 0 removed, 1 digest updated.\n"), "\(edited.output)")
        let packed = try await BreezeBinary.run([
            "package", work.path("H.freshair").path, "-o", work.path("h.tgz").path,
        ])
        #expect(packed.status == 0, "\(packed.error)")
        let listing = try await shell("tar -tzf h.tgz", in: work.url)
        #expect(listing.split(separator: "\n").filter { !$0.hasSuffix("/") }.sorted() == ["a/z.txt", "manifest.json"])
        // Released and synced: every file the manifest lists was published.
        let released = try await BreezeBinary.run([
            "release", work.path("H.freshair").path, work.path("site/H.freshair").path,
        ])
        #expect(released.status == 0, "\(released.error)")
        let synced = try await BreezeBinary.run([
            "sync", work.path("site/H.freshair").path, work.path("live").path,
        ])
        #expect(synced.status == 0, "\(synced.error)")
        #expect(work.path("live/a/z.txt").text == "edited")
    }

    @Test("validate warns where a bundle is past what devices accept by default (a file over 8 GiB)")
    func pastDeviceDefaults() async throws {
        let digest = String(repeating: "a", count: 64)
        try write("L.freshair/huge.bin", "small here")
        try write("L.freshair/manifest.json", #"[{"filename": "huge.bin", "sha": "\#(digest)", "size": 9663676416}]"#)
        let problems = await BundleValidator.run(bundle: work.path("L.freshair"))
        #expect(
            problems.contains {
                $0.severity == .warning && $0.file == "huge.bin"
                    && $0.message.contains("unless the app raises SyncConfiguration.maxFileSize")
            },
            "\(problems)"
        )
        try write("L.freshair/manifest.json", #"[{"filename": "huge.bin", "sha": "\#(digest)", "size": 10}]"#)
        #expect(
            !(await BundleValidator.run(bundle: work.path("L.freshair"))).contains { $0.message.contains("raises") }
        )
    }

    @Test("From hero.png and hero@2x.png, every screen gets a hero: a 3x device the @2x, as UIKit falls back")
    func everyScaleGetsAnImage() async throws {
        try write("H.freshair/hero.png", "1x")
        try write("H.freshair/hero@2x.png", "2x")
        #expect(try await BreezeBinary.run(["generate", work.path("H.freshair").path]).status == 0)
        for (scale, expected) in [(1, "hero.png"), (2, "hero@2x.png"), (3, "hero@2x.png")] {
            var device = ConditionEnvironment()
            device["displayScale"] = .number(String(scale))
            let selected = try await LocalBundle.selection(folder: work.path("H.freshair"), environment: device)
            #expect(selected.map(\.path).filter { $0.hasPrefix("hero") } == [expected], "at \(scale)x")
        }
    }

    @Test("hash keeps field names, order and conditions, children first; --check lists stale entries")
    func hashKeepsTheDocument() async throws {
        try write("B.freshair/a.txt", "a")
        try write("B.freshair/Child.freshair/c.txt", "c")
        let child = """
            [
                {
                    "SHA": "0000000000000000000000000000000000000000",
                    "filename": "c.txt",
                    "condition": "platform == 'iOS'"
                }
            ]
            """
        try write("B.freshair/Child.freshair/manifest.json", child)
        try write(
            "B.freshair/manifest.json",
            """
            [
              {"filename": "a.txt", "conditions": [{"key": "appVersion", "value": "1.0"}]},
              {"filename": "Child.freshair/manifest.json", "sha": "\(String(repeating: "0", count: 64))"}
            ]
            """
        )
        let check = try await BreezeBinary.run(["hash", work.path("B.freshair").path, "--check"])
        #expect(check.status == 1)
        #expect(check.output.contains("stale: Child.freshair/manifest.json: c.txt"))
        #expect(check.output.contains("stale: manifest.json: Child.freshair/manifest.json"))
        #expect(check.output.contains("stale: manifest.json: a.txt"))
        #expect(
            try String(contentsOf: work.path("B.freshair/Child.freshair/manifest.json"), encoding: .utf8) == child,
            "--check changes nothing"
        )

        let hashed = try await BreezeBinary.run(["hash", work.path("B.freshair").path])
        #expect(hashed.status == 0, "\(hashed.output)\(hashed.error)")
        let childText = try String(contentsOf: work.path("B.freshair/Child.freshair/manifest.json"), encoding: .utf8)
        // SHA-1 stays SHA-1, under its own spelling, before filename as written; 4-space indent kept.
        #expect(
            childText.contains(
                "    {\n        \"SHA\": \"\(ContentHash.of(Array("c".utf8), using: .sha1).hex)\",\n        \"size\": 1,\n        \"filename\": \"c.txt\",\n        \"condition\": \"platform == 'iOS'\""
            )
        )
        let root = try manifest("B.freshair/manifest.json")
        #expect(entry(root, "a.txt")?["sha"] as? String == ContentHash.of(Array("a".utf8), using: .sha256).hex)
        #expect((entry(root, "a.txt")?["conditions"] as? [[String: String]])?.first?["key"] == "appVersion")
        let childDigest = ContentHash.of(
            try Data(contentsOf: work.path("B.freshair/Child.freshair/manifest.json")),
            using: .sha256
        ).hex
        #expect(
            entry(root, "Child.freshair/manifest.json")?["sha"] as? String == childDigest,
            "the parent records the rewritten child"
        )
        #expect(try await BreezeBinary.run(["hash", work.path("B.freshair").path, "--check"]).status == 0)
        #expect(await BundleValidator.run(bundle: work.path("B.freshair")).filter { $0.severity == .error }.isEmpty)

        _ = try await BreezeBinary.run(["hash", work.path("B.freshair").path, "--sha256"])
        let upgraded = try manifest("B.freshair/Child.freshair/manifest.json")
        #expect((upgraded.first?["SHA"] as? String)?.count == 64)
    }

    @Test("hash moves an object-form root manifest's sequence on when content changes; validate flags expiry")
    func hashBumpsTheSequenceAndValidateFlagsExpiry() async throws {
        try write("S.freshair/a.txt", "a")
        try write(
            "S.freshair/manifest.json",
            #"{"format": 2, "sequence": 41, "expires": "2020-01-01T00:00:00Z", "files": [{"filename": "a.txt"}]}"#
        )
        let problems = await BundleValidator.run(bundle: work.path("S.freshair"))
        #expect(
            problems.contains {
                $0.severity == .error && $0.file == "manifest.json" && $0.message.contains("expired at 2020-01-01")
            }
        )

        let first = try await BreezeBinary.run(["hash", work.path("S.freshair").path])
        #expect(first.output.contains("Root manifest sequence: 42."), "\(first.output)")
        let unchanged = try await BreezeBinary.run(["hash", work.path("S.freshair").path])
        #expect(!unchanged.output.contains("sequence"), "nothing changed, so the sequence stays")
        try write("S.freshair/a.txt", "b")
        _ = try await BreezeBinary.run(["hash", work.path("S.freshair").path])
        let document = try JSONReader.parse(Data(contentsOf: work.path("S.freshair/manifest.json")))
        #expect(document["sequence"]?.integer == 43)
        #expect(document.pairs?.map(\.key) == ["format", "sequence", "expires", "files"])
    }

    @Test(
        "generate infers conditions from lproj, scales, devices, asset catalogs and release notes; keeps hand-written ones"
    )
    func generateInfersConditions() async throws {
        try write(
            "G.freshair/en.lproj/Localizable.strings",
            "\"a\" = \"b\"; \"peek_pop.title\" = \"P\"; \"peek_pop.description\" = \"Q\";"
        )
        try write(
            "G.freshair/fr.lproj/Localizable.strings",
            "\"a\" = \"c\"; \"peek_pop.title\" = \"P\"; \"peek_pop.description\" = \"Q\";"
        )
        try write(
            "G.freshair/pt-BR.lproj/Localizable.strings",
            "\"a\" = \"d\"; \"peek_pop.title\" = \"P\"; \"peek_pop.description\" = \"Q\";"
        )
        try write("G.freshair/Base.lproj/Main.storyboard", "<xml/>")
        // Apple's order is scale, then device (badge@2x~ipad.png); logo's is the other.
        for name in [
            "logo.png", "logo@2x.png", "logo@3x.png", "logo~ipad@2x.png", "badge.png", "badge@2x.png",
            "badge@2x~ipad.png",
        ] {
            try write("G.freshair/\(name)", name)
        }
        try write("G.freshair/Images.xcassets/Contents.json", #"{"info": {"version": 1}}"#)
        try write(
            "G.freshair/Images.xcassets/icon.imageset/Contents.json",
            """
            {"images": [
              {"idiom": "universal", "scale": "1x", "filename": "icon.png"},
              {"idiom": "universal", "scale": "2x", "filename": "icon@2x.png"},
              {"idiom": "universal", "scale": "3x", "filename": "icon@3x.png"},
              {"idiom": "ipad", "scale": "2x", "filename": "icon-ipad@2x.png"}
            ], "info": {"version": 1}}
            """
        )
        for name in ["icon.png", "icon@2x.png", "icon@3x.png", "icon-ipad@2x.png"] {
            try write("G.freshair/Images.xcassets/icon.imageset/\(name)", name)
        }
        try write(
            "G.freshair/release_notes.json",
            #"{"releases": [{"version": "2.0", "features": ["peek_pop"], "conditions": [{"key": "systemVersion", "value": "9.0"}]}]}"#
        )
        try write("G.freshair/Resources/peek_pop@2x.png", "p")
        try write("G.freshair/.DS_Store", "junk")
        try write("G.freshair/notes.txt~", "junk")
        try write("G.freshair/Sub.freshair/inner.txt", "inner")
        try write(
            "G.freshair/manifest.json",
            #"[{"filename": "logo.png", "condition": "channel == 'beta'"}, {"filename": "gone.txt"}]"#
        )

        let run = try await BreezeBinary.run(["generate", work.path("G.freshair").path])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.contains("removed: gone.txt"))
        let entries = try manifest("G.freshair/manifest.json")
        func condition(_ file: String) -> String? { entry(entries, file)?["condition"] as? String }
        #expect(entries.first?["filename"] as? String == "logo.png", "existing entries keep their place")
        #expect(condition("logo.png") == "channel == 'beta'", "hand-written conditions are kept")
        // Each scale serves up to the next one there is, as UIKit falls back: a 3x iPhone gets
        // @3x, an iPad at any scale its only variant.
        #expect(condition("logo@2x.png") == "device != 'ipad' && displayScale >= 2 && displayScale < 3")
        #expect(condition("logo@3x.png") == "displayScale >= 3")
        #expect(condition("logo~ipad@2x.png") == "device == 'ipad'")
        #expect(condition("badge@2x.png") == "device != 'ipad' && displayScale >= 2")
        #expect(condition("badge@2x~ipad.png") == "device == 'ipad'")
        #expect(condition("fr.lproj/Localizable.strings") == "language == 'fr'")
        #expect(condition("pt-BR.lproj/Localizable.strings") == "language == 'pt' && region == 'BR'")
        #expect(condition("en.lproj/Localizable.strings") == nil, "the development language is every device's fallback")
        #expect(condition("Base.lproj/Main.storyboard") == nil)
        #expect(condition("Images.xcassets/icon.imageset/icon.png") == "displayScale < 2")
        #expect(condition("Images.xcassets/icon.imageset/icon@2x.png") == "displayScale >= 2 && displayScale < 3")
        #expect(condition("Images.xcassets/icon.imageset/icon@3x.png") == "displayScale >= 3")
        #expect(condition("Images.xcassets/icon.imageset/icon-ipad@2x.png") == "device == 'ipad'")
        #expect(
            condition("Resources/peek_pop@2x.png") == "(systemVersion >= '9.0')",
            "a feature's image carries its release's condition"
        )
        #expect(entry(entries, ".DS_Store") == nil && entry(entries, "notes.txt~") == nil)
        #expect(entry(entries, "Images.xcassets/icon.imageset/Contents.json") == nil)
        #expect(
            entry(entries, "Sub.freshair/manifest.json")?["sha"] != nil,
            "a .freshair subfolder becomes a child manifest"
        )
        #expect(entry(try manifest("G.freshair/Sub.freshair/manifest.json"), "inner.txt") != nil)
        #expect(entries.allSatisfy { ($0["sha"] as? String)?.count == 64 })

        // Every generated condition parses and selects as intended.
        var pad = ConditionEnvironment()
        pad["device"] = "ipad"
        pad["displayScale"] = 2
        pad["locale"] = "pt_BR"
        pad["systemVersion"] = "9.1"
        let planned = Set(
            try await LocalBundle.selection(folder: work.path("G.freshair"), environment: pad).map(\.path)
        )
        #expect(
            planned.isSuperset(of: [
                "logo~ipad@2x.png", "pt-BR.lproj/Localizable.strings", "Resources/peek_pop@2x.png",
                "Images.xcassets/icon.imageset/icon-ipad@2x.png",
            ])
        )
        #expect(planned.isDisjoint(with: ["logo@2x.png", "logo.png", "fr.lproj/Localizable.strings"]))
        let generatedProblems = await BundleValidator.run(bundle: work.path("G.freshair")).filter {
            $0.severity == .error
        }
        #expect(generatedProblems.isEmpty, "\(generatedProblems)")
    }

    @Test("validate checks a package as a device installs it, with its .sig and .meta; package makes its folder")
    func validatePackage() async throws {
        try write("content/message.txt", "hello")
        let package = work.path("site/content.tgz").path  // site/ is not there yet
        let packed = try await BreezeBinary.run(["package", work.path("content").path, "-o", package, "--meta"])
        #expect(packed.status == 0, "\(packed.error)")
        let unsigned = try await BreezeBinary.run(["validate", package])
        #expect(unsigned.status == 0 && unsigned.output == "Valid: 1 file, 5 B, unsigned.\n", "\(unsigned.output)")
        let keygen = try await BreezeBinary.run(["keygen", work.path("k.key").path])
        let publicKey = try #require(keygen.output.split(separator: "\n").last.map(String.init))
        #expect(try await BreezeBinary.run(["sign", package, "--key", work.path("k.key").path]).status == 0)
        let signed = try await BreezeBinary.run(["validate", package])
        #expect(signed.output == "Valid: 1 file, 5 B, signed by \(publicKey).\n", "\(signed.output) \(signed.error)")
        // Written whole beside the old one, then renamed over it: nothing else is left in site/.
        let listed = try FileManager.default.contentsOfDirectory(atPath: work.path("site").path).sorted()
        #expect(listed == ["content.tgz", "content.tgz.meta", "content.tgz.sig"])

        // Packed again after it was signed: the .sig vouches for other bytes.
        try write("content/message.txt", "hello, world")
        #expect(try await BreezeBinary.run(["package", work.path("content").path, "-o", package]).status == 0)
        let stale = try await BreezeBinary.run(["validate", package])
        #expect(stale.status == 1, "\(stale.output)")
        #expect(stale.output.contains("error: content.tgz.sig: signed for other bytes"), "\(stale.output)")
        #expect(stale.output.contains("it changed after `breeze sign`"))

        // Cut short with a .meta that says no date; a link, made by GNU tar: refused as a device refuses them.
        let whole = try Data(contentsOf: URL(fileURLWithPath: package))
        try whole.prefix(40).write(to: work.path("cut.tgz"))
        try write("cut.tgz.meta", "{}")
        let cut = try await BreezeBinary.run(["validate", work.path("cut.tgz").path])
        #expect(cut.status == 1 && cut.output.contains("error: cut.tgz:"), "\(cut.output)")
        #expect(cut.output.contains("error: cut.tgz.meta: not {\"Last-Modified\": \"<HTTP date>\"}"))
        try FileManager.default.createDirectory(at: work.path("linked"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: work.path("linked/passwd").path,
            withDestinationPath: "/etc/passwd"
        )
        _ = try await shell("tar -czf linked.tgz linked", in: work.url)
        let linked = try await BreezeBinary.run(["validate", work.path("linked.tgz").path])
        #expect(linked.status == 1 && linked.output.contains("symbolic links are refused"), "\(linked.output)")

        // A file where a folder is needed is a usage error, not "no such file".
        let file = try await BreezeBinary.run(["validate", work.path("content/message.txt").path])
        #expect(file.status == 64 && file.error.contains("message.txt is a file; this command takes a folder"))
        // A package into the folder it packs would hold its own earlier copy: refused, nothing written.
        let inside = try await BreezeBinary.run([
            "package", work.path("content").path, "-o", work.path("content/c.tgz").path,
        ])
        #expect(inside.status != 0 && inside.error.contains("the folder being packed"), "\(inside.error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path("content").path) == ["message.txt"])
    }

    @Test("validate installs a repository as a device would: its bundles, its signed index's identity, its archives")
    func validateRepository() async throws {
        try write("cats/cat.txt", "meow")
        let keygen = try await BreezeBinary.run(["keygen", work.path("k.key").path])
        let publicKey = try #require(keygen.output.split(separator: "\n").last.map(String.init))
        let repository = work.path("site/com.example.zoo")
        let added = try await BreezeBinary.run([
            "repo", "add", work.path("cats").path, repository.path, "--key", work.path("k.key").path,
        ])
        #expect(added.status == 0, "\(added.error)")
        let valid = try await BreezeBinary.run(["validate", repository.path])
        #expect(
            valid.status == 0 && valid.output == "Valid: 1 bundle (cats 1), 1 file, 4 B, signed by \(publicKey).\n",
            "\(valid.output) \(valid.error)"
        )

        // Under another folder name, the signed index is another repository's.
        try FileManager.default.copyItem(at: repository, to: work.path("site/zoo"))
        let renamed = try await BreezeBinary.run(["validate", work.path("site/zoo").path])
        #expect(
            renamed.status == 1 && renamed.output.contains("is signed for \"com.example.zoo\""),
            "\(renamed.output)"
        )

        // An archive the index does not describe is named, and a release of it publishes nothing.
        let archive = repository.appendingPathComponent("cats-1.tar.gz")
        try Data(try Data(contentsOf: archive).dropLast(1)).write(to: archive)
        let swapped = try await BreezeBinary.run(["validate", repository.path])
        #expect(swapped.status == 1 && swapped.output.contains("error: cats-1.tar.gz: "), "\(swapped.output)")
        #expect(swapped.output.contains("the repository's signed index"))
        let release = try await BreezeBinary.run(["release", repository.path, work.path("out/com.example.zoo").path])
        #expect(release.status != 0 && release.error.contains("nothing was published"), "\(release.error)")
        #expect(!FileManager.default.fileExists(atPath: work.path("out/com.example.zoo/index.json").path))
    }

    @Test("validate lists every problem with its file, key, language and position")
    func validateFindsEverything() async throws {
        _ = try await BreezeBinary.run(["init", work.path("V.freshair").path])
        // A missing translation, a bad release condition, a stale digest, a file no manifest lists.
        try write("V.freshair/fr.lproj/Feature.strings", "\"welcome.title\" = \"Bienvenue\";\n")
        try write(
            "V.freshair/release_notes.json",
            #"{"releases": [{"version": "1.0", "features": ["welcome", "ghost"], "condition": "systemVersion >"}]}"#
        )
        try write("V.freshair/extra.txt", "unlisted")
        let run = try await BreezeBinary.run(["validate", work.path("V.freshair").path, "--json"])
        #expect(run.status == 1)
        let problems = try JSONDecoder().decode([BundleValidator.Problem].self, from: Data(run.output.utf8))
        #expect(
            problems.contains {
                $0.file == "release_notes.json" && $0.message.contains("release 1.0")
                    && $0.message.contains("column 16")
            }
        )
        #expect(
            problems.contains {
                $0.file == "manifest.json" && $0.message.contains("fr.lproj/Feature.strings")
                    && $0.message.contains("stale")
            }
        )
        #expect(problems.contains { $0.severity == .warning && $0.file == "extra.txt" })

        // With readable notes: the missing French description and the feature with no image.
        try write(
            "V.freshair/release_notes.json",
            #"{"releases": [{"version": "1.0", "features": ["welcome", "ghost"]}]}"#
        )
        let second = await BundleValidator.run(bundle: work.path("V.freshair"))
        #expect(
            second.contains {
                $0.key == "welcome.description" && $0.language == "fr" && $0.file == "fr.lproj/Feature.strings"
            }
        )
        #expect(second.contains { $0.key == "ghost.title" && $0.language == "en" })
        #expect(second.contains { $0.key == "ghost" && $0.message.contains("no image") })

        // A table that does not parse is one problem, on the line to fix, not also every key it
        // holds reported missing.
        try write(
            "V.freshair/fr.lproj/Feature.strings",
            "\"welcome.title\" = \"Bienvenue\"\n\"welcome.description\" = \"…\";\n"
        )
        let unreadable = await BundleValidator.run(bundle: work.path("V.freshair"))
        let french = unreadable.filter { $0.file == "fr.lproj/Feature.strings" }
        #expect(french.count == 1, "\(french)")
        #expect(french.first?.message.contains("line 1: expected ';' after the value of \"welcome.title\"") == true)

        // A truncated manifest names its line and column.
        let manifestText = try String(contentsOf: work.path("V.freshair/manifest.json"), encoding: .utf8)
        try write("V.freshair/manifest.json", String(manifestText.prefix(manifestText.count / 2)))
        let truncated = await BundleValidator.run(bundle: work.path("V.freshair"))
        #expect(
            truncated.contains {
                $0.file == "manifest.json" && $0.severity == .error && $0.message.contains("invalid JSON at line")
            }
        )
        let text = try await BreezeBinary.run(["validate", work.path("V.freshair").path])
        #expect(text.status == 1)
        #expect(text.output.contains("error: manifest.json: invalid JSON at line"))
    }

    @Test("validate warns where a device gets no variant of an image; generate's conditions leave no gap")
    func imageGaps() async throws {
        for name in ["hero.png", "hero@2x.png", "logo~ipad.png", "Resources/icon.png"] {
            try write("I.freshair/\(name)", name)
        }
        // What generate wrote before it knew about 3x devices, and a variant for iPads only.
        try write(
            "I.freshair/manifest.json",
            """
            [{"filename": "hero.png", "condition": "displayScale < 2"},
             {"filename": "hero@2x.png", "condition": "displayScale == 2"},
             {"filename": "logo~ipad.png", "condition": "device == 'ipad'"},
             {"filename": "Resources/icon.png", "condition": "language == 'fr'"}]
            """
        )
        _ = try await BreezeBinary.run(["hash", work.path("I.freshair").path])
        let warnings = await BundleValidator.run(bundle: work.path("I.freshair")).filter { $0.severity == .warning }
        let gaps = warnings.filter { $0.message.hasPrefix("no variant") }
            .map { "\($0.file): \($0.message.split(separator: ":")[0])" }
        #expect(
            gaps == [
                "hero: no variant of this image is selected on ipad at 3x",
                "hero: no variant of this image is selected on iphone at 3x",
                "logo: no variant of this image is selected on iphone at 1x, 2x, 3x",
            ],
            "a condition on a key validate cannot know (language) is not a gap"
        )
        let text = try await BreezeBinary.run(["validate", work.path("I.freshair").path])
        #expect(text.status == 0, "warnings do not fail validate: \(text.output)")
        #expect(text.output.contains("warning: hero: no variant of this image is selected on iphone at 3x"))

        // generate's own conditions cover every scale and device.
        try write("I.freshair/manifest.json", "[]")
        try FileManager.default.removeItem(at: work.path("I.freshair/logo~ipad.png"))
        #expect(try await BreezeBinary.run(["generate", work.path("I.freshair").path]).status == 0)
        let after = await BundleValidator.run(bundle: work.path("I.freshair"))
        #expect(!after.contains { $0.message.hasPrefix("no variant") }, "\(after)")
    }

    @Test("plan lists what a device would download, from a folder or a URL")
    func plan() async throws {
        try await PublishedFolder.with(.nginx) { server in
            try ExampleBundle.write(in: server.root)
            let env = ["--env", "platform=iOS", "--env", "systemVersion=9.0", "--env", "appVersion=1.1"]
            let remote = try await BreezeBinary.run(
                ["plan", server.url.appendingPathComponent(ExampleBundle.name).absoluteString, "--json"] + env
            )
            #expect(remote.status == 0, "\(remote.error)")
            let files = try JSONDecoder().decode([SelectedEntry].self, from: Data(remote.output.utf8)).map(\.path)
            #expect(
                files == [
                    "manifest.json", "Embed2.freshair/manifest.json", "Embed2.freshair/baz.md",
                    "Embed2.freshair/zab.md",
                ]
            )

            let local = try await BreezeBinary.run(
                ["plan", server.root.appendingPathComponent(ExampleBundle.name).path] + env
            )
            #expect(local.output.contains("\tEmbed2.freshair/zab.md"))
            #expect(local.output.contains("4 files"))
            // Embed1's manifest, for apps before 1.0: said, as sync says it.
            #expect(
                local.output.contains("; 1 for other devices (--env KEY=VALUE plans for another)"),
                "\(local.output)"
            )
            let remoteText = try await BreezeBinary.run(
                ["plan", server.url.appendingPathComponent(ExampleBundle.name).absoluteString] + env
            )
            #expect(remoteText.output.contains("; 1 for other devices"), "\(remoteText.output)")
        }
    }

    @Test("JSONValue keeps order, number text and escapes through a round trip")
    func orderedJSONRoundTrip() throws {
        let text = #"{"z": "quote \" and \u00e9\n", "a": 1.10, "list": [1, true, null], "nested": {"k": "v"}}"#
        let value = try JSONValue.parse(Data(text.utf8))
        #expect(value["z"]?.string == "quote \" and é\n")
        #expect(
            value.serialized(indent: 0) == #"{"z":"quote \" and é\n","a":1.10,"list":[1,true,null],"nested":{"k":"v"}}"#
        )
        // Short scalar arrays stay on one line.
        #expect(value.serialized(indent: 2).contains(#""list": [1, true, null]"#))
        #expect(try JSONValue.parse(Data(value.serialized().utf8)) == value)
    }
}
