import Foundation
import Testing

@testable import FreshAir

@Suite("Folder leases: a staged or partials folder is another update's while its process lives, for a day at most")
struct FolderLeaseTests {
    @Test("The decision: a living process within a day holds; a gone one, an old lease or no number does not")
    func decision() {
        let alive: (Int32) -> Bool = { $0 == 42 }
        #expect(FolderLease.isHeld(owner: 42, age: 60, processExists: alive))
        #expect(!FolderLease.isHeld(owner: 43, age: 60, processExists: alive))
        #expect(!FolderLease.isHeld(owner: 42, age: FolderLease.longest + 1, processExists: alive))
        #expect(!FolderLease.isHeld(owner: nil, age: 60, processExists: { _ in true }))
        #expect(!FolderLease.isHeld(owner: 0, age: 60, processExists: { _ in true }))
        #expect(!FolderLease.isHeld(owner: -1, age: 60, processExists: { _ in true }))
    }

    @Test(
        "On disk: this process's lease holds; one whose process exited does not, and the next update sets its folder aside"
    )
    func onDisk() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("lease-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let store = BundleStore(root: root)
        try FileManager.default.createDirectory(atPath: store.stagingPath, withIntermediateDirectories: true)
        let mine = store.stagingPath + "/1"
        try FolderLease.claim(mine)
        try FileManager.default.createDirectory(atPath: mine, withIntermediateDirectories: false)
        #expect(FolderLease.isHeld(mine, now: Date()))

        // A process that has exited: its number names nobody now.
        let exited = Process()
        exited.executableURL = URL(fileURLWithPath: "/bin/true")
        try exited.run()
        exited.waitUntilExit()
        let theirs = store.stagingPath + "/2"
        try Data("\(exited.processIdentifier)\n".utf8).write(
            to: URL(fileURLWithPath: FolderLease.ownerPath(of: theirs))
        )
        try FileManager.default.createDirectory(atPath: theirs, withIntermediateDirectories: false)
        #expect(!FolderLease.isHeld(theirs, now: Date()))

        try store.setAsideInterruptedWork(liveID: nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.stagingPath).sorted() == ["1", "1.owner"])
        #expect(FileManager.default.fileExists(atPath: store.interruptedPath + "/2"))

        // partials/ is the first update's; one that starts while it is held gets its own.
        let first = try store.claimPartials()
        #expect(first == store.partialsPath)
        let second = try store.claimPartials()
        #expect(second != first && FileManager.default.fileExists(atPath: second))
        store.releasePartials(second)
        #expect(!FileManager.default.fileExists(atPath: second))
        store.releasePartials(first)
        #expect(try store.claimPartials() == store.partialsPath, "free again")
    }
}
