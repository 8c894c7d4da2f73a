import Foundation
import FreshAir
import FreshAirTesting
import Testing

@testable import FreshAir

/// What SwiftUI observes on a ``ContentModel``: the update prompt and what's new change as the
/// app acts on them, with time from a test clock and content from the in-memory server.
@Suite("ContentModel: the update prompt and what's new as observable state")
@MainActor
struct ContentModelTests {
    let server = InMemoryServer()
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("model-\(UUID().uuidString)")
    let clock = TestClock()
    let prompts = InMemoryUpdatePromptStore()

    func publish(minimumVersion: String) {
        let notes = Data(
            #"""
            {"minimumVersion": "\#(minimumVersion)", "releases": [
              {"version": "1.0", "features": ["welcome"]}, {"version": "2.0", "features": ["sharing"]}]}
            """#.utf8
        )
        let manifest =
            #"{"format": 2, "files": [{"filename": "release_notes.json", "sha": "\#(ContentHashHex.sha256(notes))", "size": \#(notes.count)}]}"#
        server.publish(Data(manifest.utf8), at: "App.freshair/manifest.json")
        server.publish(notes, at: "App.freshair/release_notes.json")
    }

    func model(appVersion: String) -> ContentModel {
        var configuration = SyncConfiguration()
        clock.drive(&configuration)
        return ContentModel(
            FreshAirContent(
                remote: server.url("App.freshair/"),
                folder: folder,
                bundledIn: nil,
                environment: ConditionEnvironment(["appVersion": .string(appVersion)]),
                configuration: configuration,
                transport: server.transport
            ),
            prompts: prompts
        )
    }

    @Test("An available update: asked, then not for three days, then again; skipped, never for that version")
    func availablePrompt() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        publish(minimumVersion: "1.0")
        let app = model(appVersion: "1.0")
        #expect(!app.shouldPromptForUpdate, "nothing is live yet: no notes, no prompt")
        await app.refresh()
        #expect(app.updateStatus == .available(Version("2.0")!, url: nil))
        #expect(app.shouldPromptForUpdate)
        app.updatePromptShown()
        #expect(!app.shouldPromptForUpdate, "a view bound to it closes the prompt")

        clock.advance(by: .seconds(3 * 86_400 - 1))
        await app.refresh()
        #expect(!app.shouldPromptForUpdate, "asked less than three days ago")
        clock.advance(by: .seconds(2))
        await app.refresh()
        #expect(app.shouldPromptForUpdate, "three days on, asked again")
        app.skipAvailableUpdate()
        #expect(!app.shouldPromptForUpdate)
        #expect(!model(appVersion: "1.0").shouldPromptForUpdate, "the skip is remembered")
    }

    @Test("A required update is asked for whatever the app did")
    func requiredPrompt() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        publish(minimumVersion: "2.0")
        let app = model(appVersion: "1.0")
        await app.refresh()
        #expect(app.updateStatus == .required(minimum: Version("2.0")!, url: nil))
        app.updatePromptShown()
        app.skipAvailableUpdate()
        #expect(app.shouldPromptForUpdate)
    }

    @Test("What's new stays new until the app says it showed it")
    func whatsNewUntilShown() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        publish(minimumVersion: "1.0")
        let first = model(appVersion: "1.0")
        await first.refresh()
        #expect(first.whatsNew.isEmpty, "a first launch")
        #expect(model(appVersion: "2.0").whatsNew.map(\.key) == ["sharing"])
        #expect(model(appVersion: "2.0").whatsNew.map(\.key) == ["sharing"], "made, never shown: still new")
        let shown = model(appVersion: "2.0")
        shown.dismissWhatsNew()
        #expect(shown.whatsNew.isEmpty && model(appVersion: "2.0").whatsNew.isEmpty)
    }
}
