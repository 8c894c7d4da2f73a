import Foundation
import Testing

@testable import FreshAir

/// tvOS may purge any folder, Application Support included: the store's small state is kept in
/// the app's defaults too, and put back after a purge.
@Suite("The state mirror: what must outlive a tvOS purge, kept in the app's defaults")
struct StateMirrorTests {
    @Test("Only tvOS mirrors; only missing state files are put back, never one on disk")
    func decisions() {
        #expect(StoragePlan.forPlatform("tvOS").mirrorsStateInDefaults)
        #expect(!StoragePlan.forPlatform("iOS").mirrorsStateInDefaults)
        #expect(!StoragePlan.forPlatform("macOS").mirrorsStateInDefaults)
        let mirrored = ["install-id": Data("a".utf8), "high-water.json": Data("{}".utf8), "stray": Data()]
        #expect(
            Set(StateMirror.restorations(onDisk: [], mirrored: mirrored).keys) == ["install-id", "high-water.json"]
        )
        #expect(Set(StateMirror.restorations(onDisk: ["install-id"], mirrored: mirrored).keys) == ["high-water.json"])
        #expect(StateMirror.restorations(onDisk: Set(StoragePlan.stateFiles), mirrored: mirrored).isEmpty)
    }

    @Test("Saved after a run, purged with the folder, put back byte for byte")
    func purgeAndRestore() throws {
        let suite = "freshair-mirror-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer { defaults.removePersistentDomain(forName: suite) }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("mirror-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let store = BundleStore(
            root: root.appendingPathComponent("App"),
            stateFolder: root.appendingPathComponent("App.state")
        )
        try FileManager.default.createDirectory(at: store.stateFolder, withIntermediateDirectories: true)
        let installID = try store.installID()
        let marks = Data(#"{"https://cdn.example.com/App.freshair/": 7}"#.utf8)
        try marks.write(to: store.stateFolder.appendingPathComponent("high-water.json"))
        StateMirror(store: store, defaults: defaults).save()

        // The purge: the whole state folder is gone.
        try FileManager.default.removeItem(at: store.stateFolder)
        try FileManager.default.createDirectory(at: store.stateFolder, withIntermediateDirectories: true)
        try StateMirror(store: store, defaults: defaults).restore()
        #expect(try store.installID() == installID, "the same rollout bucket after a purge")
        #expect(try Data(contentsOf: store.stateFolder.appendingPathComponent("high-water.json")) == marks)

        // A file written since the mirror was saved is newer: it stays.
        let newer = Data(#"{"https://cdn.example.com/App.freshair/": 8}"#.utf8)
        try newer.write(to: store.stateFolder.appendingPathComponent("high-water.json"))
        try StateMirror(store: store, defaults: defaults).restore()
        #expect(try Data(contentsOf: store.stateFolder.appendingPathComponent("high-water.json")) == newer)

        // More than the defaults should hold is not mirrored (the last good mirror stays).
        try Data(count: StateMirror.maxBytes + 1).write(to: store.stateFolder.appendingPathComponent("keys.json"))
        StateMirror(store: store, defaults: defaults).save()
        let kept = defaults.dictionary(forKey: "FreshAir.state.App.state") as? [String: Data]
        #expect(kept?["keys.json"] == nil && kept?["high-water.json"] == marks)
    }
}
