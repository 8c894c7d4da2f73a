import Foundation
import Testing

@testable import FreshAir

@Suite("The store: staging, atomic activation, rollback, garbage collection")
struct BundleStoreTests {
    let folder: URL = FileManager.default.temporaryDirectory.appendingPathComponent(
        "freshair-store-\(UUID().uuidString.prefix(8))"
    )

    func install(_ store: BundleStore, _ files: [String: String]) async throws -> Int {
        try await store.update { update in
            let record = try await update.assemble { staged in
                var records: [String: FileRecord] = [:]
                for (path, text) in files {
                    try staged.write(Data(text.utf8), at: try BundlePath(path))
                    records[path] = FileRecord(
                        hash: .of(Array(text.utf8), using: .sha256),
                        size: Int64(text.utf8.count)
                    )
                }
                return VersionRecord(id: staged.id, source: "test", files: records)
            }
            return try #require(record).id
        }
    }

    @Test func anAssemblyThatFailsOrFindsNothingLeavesTheLiveVersionAndNoStaging() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = BundleStore(root: folder)
        _ = try await install(store, ["a.txt": "1"])
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await store.update { update in
                try await update.assemble { staged in
                    try staged.write(Data("half".utf8), at: BundlePath("a.txt"))
                    throw Refused()
                }
            }
        }
        let nothing = try await store.update { update in
            try await update.assemble { staged in
                try staged.write(Data("unused".utf8), at: BundlePath("a.txt"))
                return nil
            }
        }
        #expect(nothing == nil)
        #expect(store.liveVersionID == 1)
        #expect(try String(contentsOf: store.liveLink.appendingPathComponent("a.txt"), encoding: .utf8) == "1")
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.stagingPath).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.versionsPath).sorted() == ["1", "1.json"])
    }

    @Test func manyFilesHashThroughOneBuffer() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let hasher = FileHasher(bufferSize: 4096)
        for size in [0, 1, 4095, 4096, 4097, 100_000] {
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let path = folder.appendingPathComponent("f\(size)").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let result = try #require(try hasher.hash(atPath: path, using: .sha256))
            #expect(result.hash == .of(bytes, using: .sha256))
            #expect(result.size == Int64(size))
        }
        #expect(try hasher.hash(atPath: folder.appendingPathComponent("missing").path, using: .sha1) == nil)
        // Not a folder.
        #expect(throws: FreshAirError.self) { try hasher.hash(atPath: folder.path + "/f0/x", using: .sha1) }
    }

    @Test("The live link is relative wherever it is, so a moved container (an updated iOS app) keeps it")
    func liveLinkSurvivesAMove() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let container = folder.appendingPathComponent("Application/1111")
        let store = BundleStore(
            root: container.appendingPathComponent("Library/Application Support/FreshAir/App"),
            liveLink: container.appendingPathComponent("Documents/Content")
        )
        _ = try await install(store, ["a.txt": "1"])
        let link = container.appendingPathComponent("Documents/Content").path
        #expect(Disk.readLink(link) == "../Library/Application Support/FreshAir/App/versions/1")
        // The system moves the container, as iOS does when the app is updated.
        let moved = folder.appendingPathComponent("Application/2222")
        try FileManager.default.moveItem(at: container, to: moved)
        #expect(try String(contentsOf: moved.appendingPathComponent("Documents/Content/a.txt"), encoding: .utf8) == "1")
        #expect(LiveLink.relativePath(from: "/a/b", to: "/a/b/store/versions/3") == "store/versions/3")
        #expect(LiveLink.relativePath(from: "/a/b/c", to: "/a/x/versions/3") == "../../x/versions/3")
        #expect(LiveLink.relativePath(from: "/", to: "/x/1") == "x/1")
    }

    @Test func activationSwitchesTheLinkAndKeepsOnlyThePreviousVersion() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = BundleStore(
            root: folder.appendingPathComponent("store"),
            liveLink: folder.appendingPathComponent("Live")
        )
        #expect(store.liveVersionID == nil)
        let one = try await install(store, ["a.txt": "1"])
        let two = try await install(store, ["a.txt": "2", "sub/b.txt": "b"])
        let three = try await install(store, ["a.txt": "3"])
        #expect([one, two, three] == [Int](1...3))
        #expect(store.liveVersionID == 3)
        #expect(try String(contentsOf: folder.appendingPathComponent("Live/a.txt"), encoding: .utf8) == "3")
        // The link is relative, so the folder can move as a whole.
        #expect(Disk.readLink(folder.appendingPathComponent("Live").path) == "store/versions/3")
        let versions = try FileManager.default.contentsOfDirectory(atPath: store.versionsPath).sorted()
        #expect(versions == ["2", "2.json", "3", "3.json"])
        #expect(try store.liveRecord()?.previous == 2)

        let back = try await store.rollBack()
        #expect(back == 2)
        #expect(try String(contentsOf: folder.appendingPathComponent("Live/sub/b.txt"), encoding: .utf8) == "b")
        #expect(!FileManager.default.fileExists(atPath: store.versionPath(3)))
    }

    @Test func rollingBackWithNothingBeforeIsAClearError() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = BundleStore(root: folder)
        _ = try await install(store, ["a.txt": "1"])
        await #expect(throws: FreshAirError.self) { try await store.rollBack() }
        #expect(store.liveVersionID == 1)
    }

    @Test func whatAKilledUpdateLeftInStagingIsClearedAndTheLiveVersionIsUntouched() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = BundleStore(root: folder)
        _ = try await install(store, ["a.txt": "1"])
        // A crash mid-update: a half-filled staging folder.
        try FileManager.default.createDirectory(atPath: store.stagingPath + "/9/x", withIntermediateDirectories: true)
        let next = try await install(store, ["a.txt": "2"])
        #expect(next == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.stagingPath).isEmpty)
    }

    @Test func aFolderWithSomeoneElsesFilesIsNeverReplaced() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let live = folder.appendingPathComponent("Docs")
        try FileManager.default.createDirectory(at: live, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: live.appendingPathComponent("mine.txt"))
        let store = BundleStore(root: folder.appendingPathComponent("store"), liveLink: live)
        await #expect {
            _ = try await install(store, ["a.txt": "1"])
        } throws: { error in
            guard (error as? FreshAirError)?.code == .liveLocationOccupied else { return false }
            return true
        }
        #expect(try String(contentsOf: live.appendingPathComponent("mine.txt"), encoding: .utf8) == "keep")
    }

    @Test func readersOfTheOldVersionKeepAConsistentTree() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = BundleStore(root: folder)
        _ = try await install(store, ["a.txt": "old", "b.txt": "old"])
        let pinned = try #require(store.liveDirectory)
        _ = try await install(store, ["a.txt": "new", "b.txt": "new"])
        // A reader that resolved the live folder before the switch still sees the old pair.
        #expect(try String(contentsOf: pinned.appendingPathComponent("a.txt"), encoding: .utf8) == "old")
        #expect(try String(contentsOf: pinned.appendingPathComponent("b.txt"), encoding: .utf8) == "old")
        #expect(try String(contentsOf: store.liveLink.appendingPathComponent("b.txt"), encoding: .utf8) == "new")
    }
}
