import BreezeKit
import Foundation
import FreshAir
import Testing

/// A repository sync touches only what FreshAir installed: a folder of the user's at a bundle's
/// name is refused, kept, and never deleted later, and the refusal leaves no store behind.
@Suite("A user's folder at a bundle's name is never deleted; a refused install leaves nothing behind")
struct RepositoryOwnershipTests {
    @Test("live/notes/ is the user's: the install is refused (73), no store stays, and dropping notes keeps it")
    func usersFolderSurvives() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let id = "com.example.notes"
            let published = server.root.appendingPathComponent(id)
            let sources = try TemporaryFolder("ownership-sources")
            for name in ["notes", "maps"] {
                let folder = sources.path(name)
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try Data("\(name) content".utf8).write(to: folder.appendingPathComponent("file.txt"))
                try RepositoryPublisher.add(folder: folder, as: name, to: published)
            }
            let device = try TemporaryFolder("ownership-device")
            let mine = device.path("live/notes/mine.txt")
            try FileManager.default.createDirectory(
                at: mine.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try Data("the user's own".utf8).write(to: mine)
            let repository = Repository(
                source: server.url,
                id: id,
                directory: device.path("live"),
                stateFolder: device.path("state"),
                configuration: SyncConfiguration()
            )
            do {
                _ = try await repository.update()
                Issue.record("installing over the user's folder went through")
            } catch let error as FreshAirError {
                #expect(error.code == .liveLocationOccupied, "\(error)")
            }
            #expect(mine.text == "the user's own")
            #expect(repository.installedBundles["notes"] == nil)
            let stores = try FileManager.default.subpathsOfDirectory(atPath: device.url.path)
            #expect(
                !stores.contains { $0.hasSuffix("bundles/notes") },
                "a store for the refused bundle stayed: \(stores.filter { $0.contains("notes") })"
            )

            // The next index drops notes: the sync removes only what it installed.
            let indexURL = published.appendingPathComponent("index.json")
            var index = try JSONSerialization.jsonObject(with: Data(contentsOf: indexURL)) as! [String: Any]
            var bundles = index["bundles"] as! [String: Any]
            bundles["notes"] = nil
            index["bundles"] = bundles
            try PublishedText.write(
                String(decoding: try JSONSerialization.data(withJSONObject: index), as: UTF8.self),
                to: indexURL
            )
            _ = try await repository.update()
            #expect(mine.text == "the user's own", "the sync deleted the user's folder")
            #expect(device.path("live/maps/file.txt").text == "maps content")
        }
    }
}
