import Foundation
import Testing

@testable import FreshAir

/// Lookups from a view's `body`: answered from listings read once per value, images with the
/// scale they were drawn for.
@Suite("Content lookups: an in-memory index per value, images with their scale")
struct ContentIndexTests {
    /// A new folder holding `files` (each file's bytes are its name).
    static func folder(with files: [String]) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("index-\(UUID().uuidString)")
        for name in files {
            let file = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try Data(name.utf8).write(to: file)
        }
        return root
    }

    @Test("After the first lookup a value answers from memory; a new value sees the change")
    func listedOnce() throws {
        let root = try Self.folder(with: ["hero.png", "hero@3x.png", "de.lproj/terms.txt"])
        defer { try? FileManager.default.removeItem(at: root) }
        let live = ContentBundle(root: root, preferredLocalizations: ["de"], displayScale: 3)
        #expect(live.image(named: "hero") == ContentImage(url: root.appendingPathComponent("hero@3x.png"), scale: 3))
        #expect(live.url(forResource: "terms", withExtension: "txt")?.lastPathComponent == "terms.txt")
        #expect(live.url(forResource: "Terms", withExtension: "txt") == nil, "names match exactly")

        // The disk changes under the value: it keeps answering as it listed, without reading.
        try FileManager.default.removeItem(at: root.appendingPathComponent("hero@3x.png"))
        try FileManager.default.removeItem(at: root.appendingPathComponent("de.lproj/terms.txt"))
        #expect(live.image(named: "hero")?.scale == 3)
        #expect(live.url(forResource: "terms", withExtension: "txt") != nil)

        let next = ContentBundle(root: root, preferredLocalizations: ["de"], displayScale: 3)
        #expect(next.image(named: "hero") == ContentImage(url: root.appendingPathComponent("hero.png"), scale: 1))
        #expect(next.url(forResource: "terms", withExtension: "txt") == nil)
        #expect(next.imageURL(named: "hero") == next.image(named: "hero")?.url)
    }

    @Test("A device's variant at the nearest scale, with that scale; ties go to the first name")
    func scales() throws {
        let root = try Self.folder(with: [
            "Resources/a@2x~ipad.png", "Resources/a@3x.png", "Resources/b.jpg", "Resources/b.png",
        ])
        defer { try? FileManager.default.removeItem(at: root) }
        let pad = ContentBundle(root: root, displayScale: 3, device: "ipad")
        #expect(pad.image(named: "a")?.url.lastPathComponent == "a@2x~ipad.png")
        #expect(pad.image(named: "a")?.scale == 2)
        let phone = ContentBundle(root: root, displayScale: 1, device: "iphone")
        #expect(phone.image(named: "a")?.scale == 3, "the nearest larger when no exact scale")
        #expect(phone.image(named: "b")?.url.lastPathComponent == "b.jpg")
        #expect(phone.image(named: "c") == nil)
    }
}
