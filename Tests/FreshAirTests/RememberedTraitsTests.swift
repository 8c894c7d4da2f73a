import Foundation
import FreshAir
import FreshAirTesting
import Testing

@testable import FreshAir

/// A background launch plans for the screen the user has: what a launch with a screen read is
/// kept, and fills in what a launch without one only assumed.
@Suite("Remembered device traits: background syncs plan for the foreground's screen")
struct RememberedTraitsTests {
    /// An environment as ``ConditionEnvironment/current(appVersion:)`` makes it on the main
    /// thread of a 3× iPhone in German.
    func foreground() -> ConditionEnvironment {
        var environment = ConditionEnvironment()
        environment["platform"] = "iOS"
        environment["displayScale"] = 3
        environment["device"] = "iphone"
        environment["locale"] = "de_DE"
        return environment
    }

    /// The same device in the background (no screen) and in an extension (no app languages).
    func background(inExtension: Bool = false) -> ConditionEnvironment {
        var environment = ConditionEnvironment()
        environment["platform"] = "iOS"
        environment.values["displayScale"] = 1
        environment["device"] = "iphone"
        environment.values["locale"] = inExtension ? "en_US" : "de_DE"
        environment.values["language"] = inExtension ? "en" : "de"
        environment.values["region"] = inExtension ? "US" : "DE"
        environment.assumedKeys = ConditionEnvironment.assumedKeys(
            screenRead: false,
            deviceRead: true,
            inAppExtension: inExtension
        )
        return environment
    }

    @Test("What current() could not read here is assumed; a key the app sets is not")
    func assumedKeys() {
        #expect(ConditionEnvironment.assumedKeys(screenRead: true, deviceRead: true, inAppExtension: false) == [])
        #expect(
            ConditionEnvironment.assumedKeys(screenRead: false, deviceRead: true, inAppExtension: false)
                == ["displayScale"]
        )
        #expect(
            ConditionEnvironment.assumedKeys(screenRead: true, deviceRead: false, inAppExtension: true)
                == ["device", "locale", "language", "region"]
        )
        var environment = background(inExtension: true)
        environment["displayScale"] = 2
        environment["language"] = "fr"
        #expect(environment.assumedKeys.isEmpty, "the app set them")
        #expect(
            environment
                == {
                    var copy = environment
                    copy.assumedKeys = ["displayScale"]
                    return copy
                }()
        )
        // On Linux nothing has a screen: the scale is assumed, as in an app's background.
        #expect(ConditionEnvironment.current(appVersion: "1.0").assumedKeys.contains("displayScale"))
    }

    @Test("Decision table: read keys are kept, assumed ones take the remembered value")
    func reconcile() {
        // First launch, with a screen: plans as read, remembers it.
        let first = RememberedTraits.reconcile(foreground(), remembered: nil)
        #expect(first.environment == foreground())
        let kept = try! #require(first.remember)
        #expect(kept.displayScale == "3" && kept.language == "de" && kept.region == "DE" && kept.locale == "de_DE")

        // Again with a screen and nothing changed: nothing to write.
        #expect(RememberedTraits.reconcile(foreground(), remembered: kept).remember == nil)

        // Background: the scale comes from memory, nothing is written.
        let later = RememberedTraits.reconcile(background(), remembered: kept)
        #expect(later.environment["displayScale"]?.text == "3")
        #expect(later.remember == nil)

        // Background with nothing remembered: plans for what it has, remembers only what it read.
        let cold = RememberedTraits.reconcile(background(), remembered: nil)
        #expect(cold.environment["displayScale"]?.text == "1")
        #expect(cold.remember?.displayScale == nil && cold.remember?.language == "de")

        // An extension: the app's languages, all three together.
        let appex = RememberedTraits.reconcile(background(inExtension: true), remembered: kept)
        #expect(appex.environment["language"]?.text == "de" && appex.environment["region"]?.text == "DE")
        #expect(appex.environment["locale"]?.text == "de_DE" && appex.environment["displayScale"]?.text == "3")

        // The user moved to a 2× iPad in French: the foreground overwrites the memory.
        var moved = foreground()
        moved["displayScale"] = 2
        moved["device"] = "ipad"
        moved["locale"] = "fr"
        let changed = try! #require(RememberedTraits.reconcile(moved, remembered: kept).remember)
        #expect(changed.displayScale == "2" && changed.device == "ipad" && changed.language == "fr")
        #expect(changed.region == nil, "a locale without a region clears the old one")
    }

    @Test("A background sync after a foreground one downloads no art for another scale")
    func backgroundSyncKeepsTheScale() async throws {
        let server = InMemoryServer()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("traits-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let art = [("logo.png", "displayScale < 2"), ("logo@3x.png", "displayScale >= 3")]
        func publish(_ text: String) {
            let files =
                [("a.txt", Data(text.utf8), nil as String?)]
                + art.map { ($0.0, Data(repeating: 7, count: 50_000 + $0.0.count), $0.1) }
            let entries = files.map { name, data, condition in
                let test = condition.map { #", "condition": "\#($0)""# } ?? ""
                return
                    #"{"filename": "\#(name)", "sha": "\#(ContentHashHex.sha256(data))", "size": \#(data.count)\#(test)}"#
            }
            server.publish(
                Data(#"{"format": 2, "files": [\#(entries.joined(separator: ", "))]}"#.utf8),
                at: "App.freshair/manifest.json"
            )
            for (name, data, _) in files { server.publish(data, at: "App.freshair/\(name)") }
        }
        func content(_ environment: ConditionEnvironment) -> FreshAirContent {
            FreshAirContent(
                remote: server.url("App.freshair/"),
                folder: folder,
                bundledIn: nil,
                environment: environment,
                transport: server.transport
            )
        }
        func live(_ name: String) -> Bool {
            FileManager.default.fileExists(atPath: BundleStore(root: folder).liveLink.appendingPathComponent(name).path)
        }

        publish("one")
        try await content(foreground()).run()
        #expect(live("logo@3x.png") && !live("logo.png"))

        publish("two")
        let summary = try await content(background()).run()
        #expect(summary.bytesDownloaded < 1_000, "the manifest and a.txt: the 3× art stays, no 1× art is fetched")
        #expect(live("logo@3x.png") && !live("logo.png"))

        // Without the memory the same background sync would have planned for 1×: the test can fail.
        try FileManager.default.removeItem(
            at: BundleStore(root: folder).stateFolder.appendingPathComponent("traits.json")
        )
        publish("three")
        let forgetful = try await content(background()).run()
        #expect(forgetful.bytesDownloaded > 50_000 && live("logo.png") && !live("logo@3x.png"))
    }
}
