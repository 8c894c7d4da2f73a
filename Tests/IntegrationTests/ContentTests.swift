import BreezeKit
import Foundation
import FreshAir
import Testing

@Suite("Using synced content: lookup, what's new, update prompts")
struct ContentTests {
    let folder: TemporaryFolder
    let bundleURL: URL

    init() throws {
        folder = try TemporaryFolder("content")
        bundleURL = try ExampleFeatureBundle.write(in: folder.url)
    }

    func device(locale: String = "en_US", systemVersion: String = "9.0", scale: Int = 2) -> ConditionEnvironment {
        var environment = ConditionEnvironment()
        environment["platform"] = "iOS"
        environment["systemVersion"] = .string(systemVersion)
        environment["locale"] = .string(locale)
        environment["displayScale"] = .number(String(scale))
        return environment
    }

    @Test("The specification's example: 1.0→1.2 shows 4 features, 1.2→2.1 shows 3")
    func specificationExample() throws {
        let environment = device()
        let content = ContentBundle(root: bundleURL, environment: environment)
        let first = try content.whatsNew(from: Version("1.0"), to: Version("1.2")!, environment: environment)
        #expect(
            first.map(\.key) == ["apple_pay", "calendar_integration", "twitters_integration", "facebook_integration"]
        )
        let second = try content.whatsNew(from: Version("1.2"), to: Version("2.1")!, environment: environment)
        #expect(second.map(\.key) == ["new_major_feature", "new_major_feature_2", "peek_pop"])
        #expect(second.first?.title == "A new home")
        #expect(second.first?.description == "Everything you use most, on one screen.")
        #expect(second.first?.image?.lastPathComponent == "new_major_feature@2x.png")

        #expect(
            try content.whatsNew(from: nil, to: Version("2.1")!, environment: environment).isEmpty,
            "nothing on first launch"
        )
        #expect(try content.whatsNew(from: Version("2.1"), to: Version("2.1")!, environment: environment).isEmpty)
    }

    @Test("Release conditions apply: an iOS 8.1 device never hears of 8.2-only releases")
    func releaseConditions() throws {
        let environment = device(systemVersion: "8.1")
        let features = try ContentBundle(root: bundleURL, environment: environment)
            .whatsNew(from: Version("1.0"), to: Version("2.1")!, environment: environment)
        #expect(features.map(\.key) == ["apple_pay", "calendar_integration", "twitters_integration", "peek_pop"])
    }

    @Test("French from a UTF-16 table; a missing translation and a language with no table fall back to English")
    func localizationFallback() throws {
        let french = device(locale: "fr_FR")
        let features = try ContentBundle(root: bundleURL, environment: french)
            .whatsNew(from: Version("2.0"), to: Version("2.1")!, environment: french)
        #expect(features.map(\.title) == ["Peek and Pop"], "peek_pop has no French text")
        let calendar = ContentBundle(root: bundleURL, environment: french).localizedString(
            forKey: "calendar_integration.title",
            table: "Feature"
        )
        #expect(calendar == "Calendrier")
        let german = ContentBundle(root: bundleURL, environment: device(locale: "de_DE"))
        #expect(german.localizedString(forKey: "calendar_integration.title", table: "Feature") == "Calendar")
        #expect(german.localizedString(forKey: "no.such.key", value: "Default", table: "Feature") == "Default")
        #expect(german.localizedString(forKey: "no.such.key", table: "Feature") == "no.such.key")
    }

    @Test("Images pick the display scale and the device")
    func imagesByScaleAndDevice() throws {
        for scale in [1, 2, 3] {
            let content = ContentBundle(root: bundleURL, environment: device(scale: scale))
            let expected = scale == 1 ? "apple_pay.png" : "apple_pay@\(scale)x.png"
            #expect(content.imageURL(named: "apple_pay")?.lastPathComponent == expected)
        }
        let resources = bundleURL.appendingPathComponent("Resources")
        try ExampleFeatureBundle.writeImage(to: resources.appendingPathComponent("apple_pay~ipad@2x.png"))
        var pad = device(scale: 2)
        pad["device"] = "ipad"
        #expect(
            ContentBundle(root: bundleURL, environment: pad).imageURL(named: "apple_pay")?.lastPathComponent
                == "apple_pay~ipad@2x.png"
        )
        #expect(
            ContentBundle(root: bundleURL, environment: device(scale: 2)).imageURL(named: "apple_pay")?
                .lastPathComponent == "apple_pay@2x.png"
        )
        // Apple's order, scale then device, is the same image.
        try ExampleFeatureBundle.writeImage(to: resources.appendingPathComponent("apple_pay@3x~ipad.png"))
        pad["displayScale"] = 3
        #expect(
            ContentBundle(root: bundleURL, environment: pad).imageURL(named: "apple_pay")?.lastPathComponent
                == "apple_pay@3x~ipad.png"
        )
        // Only a 1x image: a 3x display still gets it (the largest smaller one).
        try FileManager.default.createDirectory(
            at: bundleURL.appendingPathComponent("only"),
            withIntermediateDirectories: true
        )
        try ExampleFeatureBundle.writeImage(to: bundleURL.appendingPathComponent("only/logo.png"))
        #expect(
            ContentBundle(root: bundleURL, environment: device(scale: 3)).imageURL(named: "logo", subdirectory: "only")?
                .lastPathComponent == "logo.png"
        )
    }

    @Test("Lookup order: root and Resources, then pt-BR, pt_BR, pt, Base, the development language")
    func lookupOrder() throws {
        func put(_ path: String, _ text: String) throws {
            let url = folder.path("order/\(path)")
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try Data(text.utf8).write(to: url)
        }
        try put("Base.lproj/a.txt", "base")
        try put("en.lproj/a.txt", "en")
        try put("pt.lproj/a.txt", "pt")
        try put("pt_BR.lproj/b.txt", "pt_BR")
        try put("Resources/c.txt", "resources")
        try put("pt.lproj/c.txt", "pt")
        try put("en.lproj/d.txt", "en")
        let content = ContentBundle(root: folder.path("order"), preferredLocalizations: ["pt-BR"])
        #expect(content.url(forResource: "a", withExtension: "txt")?.text == "pt")
        #expect(content.url(forResource: "b", withExtension: "txt")?.text == "pt_BR")
        #expect(content.url(forResource: "c", withExtension: "txt")?.text == "resources")
        #expect(content.url(forResource: "d", withExtension: "txt")?.text == "en")
        #expect(
            ContentBundle(root: folder.path("order"), preferredLocalizations: ["ja"]).url(
                forResource: "a",
                withExtension: "txt"
            )?.text == "base"
        )
        #expect(content.url(forResource: "a", withExtension: "txt", localization: "en")?.text == "en")
        #expect(content.url(forResource: "missing", withExtension: "txt") == nil)
    }

    @Test("What's new since the last version seen is remembered, and used up only when shown")
    func sinceLastSeen() throws {
        let environment = device()
        let content = ContentBundle(root: bundleURL, environment: environment)
        let store = FileUpdatePromptStore(url: folder.path("state/prompts.json"))
        #expect(
            try content.whatsNewSinceLastSeen(current: Version("1.2")!, environment: environment, store: store).isEmpty,
            "first launch"
        )
        let upgraded = try content.whatsNewSinceLastSeen(
            current: Version("2.1")!,
            environment: environment,
            store: store
        )
        #expect(upgraded.count == 3)
        #expect(
            try content.whatsNewSinceLastSeen(current: Version("2.1")!, environment: environment, store: store).count
                == 3,
            "not shown yet (a background launch, say): still new"
        )
        ContentBundle.markWhatsNewSeen(current: Version("2.1")!, store: store)
        #expect(
            try content.whatsNewSinceLastSeen(current: Version("2.1")!, environment: environment, store: store).isEmpty,
            "shown once"
        )
        ContentBundle.markWhatsNewSeen(current: Version("1.2")!, store: store)
        #expect(store.load().lastSeenVersion == "2.1", "an older app version never moves the mark back")
    }

    @Test("breeze whatsnew and check-update")
    func commands() async throws {
        let env = ["--env", "platform=iOS", "--env", "systemVersion=9.0"]
        let whatsNew = try await BreezeBinary.run(
            ["whatsnew", bundleURL.path, "--from", "1.0", "--to", "1.2", "--locale", "fr_FR"] + env
        )
        #expect(whatsNew.status == 0, "\(whatsNew.error)")
        #expect(whatsNew.output.contains("4 features"))
        #expect(whatsNew.output.contains("- Calendrier (1.1): Les événements vont droit dans votre calendrier."))
        // The language alone, as `breeze sync --env language=fr` chose the files: the texts follow.
        let byLanguage = try await BreezeBinary.run(
            ["whatsnew", bundleURL.path, "--from", "1.0", "--to", "1.2", "--env", "language=fr"] + env
        )
        #expect(byLanguage.output.contains("- Calendrier (1.1)"), "\(byLanguage.output)")
        let json = try await BreezeBinary.run(
            ["whatsnew", bundleURL.path, "--from", "1.2", "--to", "2.1", "--json"] + env
        )
        #expect(try JSONDecoder().decode([Feature].self, from: Data(json.output.utf8)).count == 3)

        #expect(
            try await BreezeBinary.run(["check-update", bundleURL.path, "--app-version", "1.0"] + env).output
                == "required 1.2 https://apps.example.com/app/id123\n"
        )
        #expect(
            try await BreezeBinary.run(["check-update", bundleURL.path, "--app-version", "1.5"] + env).output
                == "available 2.1 https://apps.example.com/app/id123\n"
        )
        #expect(
            try await BreezeBinary.run(["check-update", bundleURL.path, "--app-version", "2.1"] + env).output
                == "up to date\n"
        )
    }

    @Test("breeze preview renders a page that headless Chromium shows with content")
    func previewRendersInChromium() async throws {
        let page = folder.path("whatsnew.html")
        let preview = try await BreezeBinary.run([
            "preview", bundleURL.path, "--from", "1.2", "--to", "2.1", "--locale", "fr_FR", "-o", page.path,
            "--env", "platform=iOS", "--env", "systemVersion=9.0",
        ])
        #expect(preview.status == 0, "\(preview.error)")
        let html = try String(contentsOf: page, encoding: .utf8)
        #expect(html.contains("Un nouvel accueil"))
        #expect(html.contains("data:image/png;base64,"))

        let chromium = try #require(
            ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
                FileManager.default.isExecutableFile(atPath: $0)
            },
            "chromium is not installed: run scripts/test"
        )
        let screenshot = folder.path("whatsnew.png")
        try await shell(
            "\(chromium) --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=800,700 "
                + "--screenshot=\(screenshot.path) file://\(page.path) >/dev/null 2>&1",
            in: folder.url
        )
        // Decode the PNG and count what is not background: text and images, not a blank page.
        let measure = try await shell("/usr/bin/python3 \(Self.pngStatistics) \(screenshot.path)", in: folder.url)
        let numbers = measure.split(separator: " ").compactMap {
            Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let (colors, inked) = (numbers[0], numbers[1])
        #expect(colors > 50, "a blank page has a handful of colours")
        #expect(inked > 0.02, "more than 2% of the page differs from the background")
    }

    /// A stdlib-only PNG decoder that prints the number of distinct colours and the share of
    /// pixels that differ from the most common one.
    static let pngStatistics: String = {
        let script = """
            import struct, sys, zlib, collections
            data = open(sys.argv[1], 'rb').read()
            assert data[:8] == b'\\x89PNG\\r\\n\\x1a\\n'
            pos, idat, width = 8, b'', 0
            while pos < len(data):
                length, kind = struct.unpack('>I4s', data[pos:pos + 8])
                body = data[pos + 8:pos + 8 + length]
                if kind == b'IHDR':
                    width, height, depth, ctype = struct.unpack('>IIBB', body[:10])
                if kind == b'IDAT':
                    idat += body
                pos += 12 + length
            bpp = {2: 3, 6: 4}[ctype]
            raw = zlib.decompress(idat)
            stride = width * bpp
            rows, prev, i = [], bytearray(stride), 0
            for _ in range(height):
                f = raw[i]; line = bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
                for x in range(stride):
                    a = line[x - bpp] if x >= bpp else 0
                    b = prev[x]; c = prev[x - bpp] if x >= bpp else 0
                    if f == 1: line[x] = (line[x] + a) & 255
                    elif f == 2: line[x] = (line[x] + b) & 255
                    elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
                    elif f == 4:
                        p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                        line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
                rows.append(bytes(line)); prev = line
            counts = collections.Counter(row[x:x + 3] for row in rows for x in range(0, stride, bpp))
            total = sum(counts.values())
            print(len(counts), 1 - counts.most_common(1)[0][1] / total)
            """
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("freshair-png-statistics.py")
        try? script.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }()
}
