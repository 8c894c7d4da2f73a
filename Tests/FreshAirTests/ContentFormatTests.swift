import Foundation
import FreshAir
import Testing

@Suite("Strings tables, release notes and presentation files")
struct ContentFormatTests {
    @Test func stringsFilesWithCommentsEscapesAndUnquotedKeys() throws {
        let text = """
            /* A comment
               over two lines */
            "greeting" = "Hello, \\"you\\"\\n";   // trailing comment
            plain_key = "unquoted key";
            "accent" = "caf\\U00E9";
            "alone";
            """
        let table = try StringsTable(stringsFile: Data(text.utf8), source: "Localizable.strings")
        #expect(table.strings["greeting"] == "Hello, \"you\"\n")
        #expect(table.strings["plain_key"] == "unquoted key")
        #expect(table.strings["accent"] == "café")
        #expect(table.strings["alone"] == "alone")
    }

    @Test func utf16WithEitherByteOrderMark() throws {
        let text = "\"title\" = \"Été\";\n"
        var little = Data([0xFF, 0xFE])
        little.append(text.data(using: .utf16LittleEndian)!)
        var big = Data([0xFE, 0xFF])
        big.append(text.data(using: .utf16BigEndian)!)
        for data in [little, big] {
            #expect(try StringsTable(stringsFile: data, source: "x").strings["title"] == "Été")
        }
    }

    @Test func syntaxErrorsNameTheLine() {
        #expect {
            _ = try StringsTable(
                stringsFile: Data("\"a\" = \"b\";\n\"c\" = \"d\"\n\"e\" = \"f\";".utf8),
                source: "fr.lproj/Feature.strings"
            )
        } throws: { error in
            guard let error = error as? StringsTable.SyntaxError else { return false }
            // The ';' is missing on line 2, where the fix goes; the reader finds out on line 3.
            return error.line == 2 && "\(error)".contains("fr.lproj/Feature.strings")
                && error.message == "expected ';' after the value of \"c\", found '\"' on line 3"
        }
    }

    @Test func stringCatalogsPerLanguageWithPlurals() throws {
        let catalog = """
            {"sourceLanguage": "en", "version": "1.0", "strings": {
              "hello": {"localizations": {"en": {"stringUnit": {"state": "translated", "value": "Hello"}},
                                          "de": {"stringUnit": {"state": "translated", "value": "Hallo"}}}},
              "files": {"localizations": {"de": {"variations": {"plural": {
                  "one": {"stringUnit": {"state": "translated", "value": "%lld Datei"}},
                  "other": {"stringUnit": {"state": "translated", "value": "%lld Dateien"}}}}}}},
              "Untranslated": {}
            }}
            """
        let german = try StringsTable(catalog: Data(catalog.utf8), language: "de", source: "Localizable.xcstrings")
        #expect(german.strings["hello"] == "Hallo")
        #expect(german.strings["files"] == "%lld Dateien")
        #expect(german.strings["Untranslated"] == nil)
        let english = try StringsTable(catalog: Data(catalog.utf8), language: "en", source: "Localizable.xcstrings")
        #expect(english.strings["Untranslated"] == "Untranslated")
    }

    @Test func releaseNotesWithTheOldSchemasQuirks() throws {
        let text = """
            {
              "minimumVersion": 1.2,
              "upgradeURL": "https://apps.example.com/app",
              "releases": [
                {"version": "2.0", "features": ["b",], "conditions": [{"key": "systemVersion", "value": "8.2"},]},
                {"version": 1.10, "features": ["a"], "condition": "platform == 'iOS'"},
              ],
            }
            """
        let notes = try ReleaseNotes(data: Data(text.utf8), source: "release_notes.json")
        #expect(notes.minimumVersion == Version("1.2"))
        // Sorted; 1.10 as a JSON number is 1.1.
        #expect(notes.releases.map(\.version) == [Version("1.1")!, Version("2.0")!])
        var environment = ConditionEnvironment()
        environment["systemVersion"] = "8.10"
        environment["platform"] = "iOS"
        #expect(notes.releases(for: environment).count == 2)  // comparison defaults to gte; 8.10 >= 8.2
        environment["systemVersion"] = "8.1"
        #expect(notes.releases(for: environment).map(\.features) == [["a"]])
    }

    @Test func aBadReleaseConditionNamesTheRelease() {
        let text = #"{"releases": [{"version": "1.1", "features": [], "condition": "systemVersion >"}]}"#
        #expect {
            _ = try ReleaseNotes(data: Data(text.utf8), source: "release_notes.json")
        } throws: { error in
            "\(error)".contains("release_notes.json") && "\(error)".contains("release 1.1")
                && "\(error)".contains("column")
        }
    }

    @Test func theOldPresentationExampleLoads() throws {
        let text = """
            {
                "screen": "ForceUpgrade",
                "viewController": "RZUpgradeViewController",
                "configuration": {
                    "releaseNotes" = [
                        {
                            "image":"raizlabs_logo",
                            "title": "Something New",
                            "description": "Description"
                        }
                    ],
                    "forceUpgrade": true
                }
            }
            """
        let presentation = try Presentation(data: Data(text.utf8), source: "presentation.json")
        #expect(presentation.screen == "ForceUpgrade")
        #expect(presentation.viewController == "RZUpgradeViewController")
        #expect(presentation.configuration["forceUpgrade"]?.bool == true)
        #expect(presentation.configuration["releaseNotes"]?.array?.first?.object?["title"]?.string == "Something New")
        // What an app gets: strict JSON its own Decodable reads.
        struct Screen: Decodable {
            struct Configuration: Decodable { var forceUpgrade: Bool }
            var screen: String
            var viewController: String
            var configuration: Configuration
        }
        let screen = try JSONDecoder().decode(Screen.self, from: presentation.json)
        #expect(screen.screen == "ForceUpgrade" && screen.viewController == "RZUpgradeViewController")
        #expect(screen.configuration.forceUpgrade)
    }

    @Test func updateStatusAndNagRules() {
        let notes = ReleaseNotes(
            minimumVersion: Version("1.2"),
            upgradeURL: URL(string: "https://apps.example.com"),
            releases: [.init(version: Version("1.2")!, features: []), .init(version: Version("2.1")!, features: [])]
        )
        let environment = ConditionEnvironment()
        #expect(
            notes.updateStatus(current: Version("1.0")!, environment: environment)
                == .required(minimum: Version("1.2")!, url: notes.upgradeURL)
        )
        #expect(
            notes.updateStatus(current: Version("1.5")!, environment: environment)
                == .available(Version("2.1")!, url: notes.upgradeURL)
        )
        #expect(notes.updateStatus(current: Version("2.1.0")!, environment: environment) == .upToDate)

        let policy = UpdatePromptPolicy(minimumInterval: 3600, store: InMemoryUpdatePromptStore())
        let available = UpdateStatus.available(Version("2.1")!, url: nil)
        let now = Date()
        #expect(policy.shouldPrompt(for: available, now: now))
        policy.didPrompt(at: now)
        #expect(!policy.shouldPrompt(for: available, now: now.addingTimeInterval(60)), "too soon after the last prompt")
        #expect(policy.shouldPrompt(for: available, now: now.addingTimeInterval(7200)))
        policy.skip(Version("2.1")!)
        #expect(!policy.shouldPrompt(for: available, now: now.addingTimeInterval(7200)), "skipped")
        #expect(
            policy.shouldPrompt(for: .available(Version("2.2")!, url: nil), now: now.addingTimeInterval(7200)),
            "a newer one is not skipped"
        )
        #expect(
            policy.shouldPrompt(for: .required(minimum: Version("2.1")!, url: nil), now: now),
            "required always shows"
        )
    }
}
