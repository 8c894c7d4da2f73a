import Foundation
import Testing

@testable import FreshAir

@Suite("Where an app's store lives, how the system keeps it, and what a locked device says")
struct StoragePlanTests {
    @Test("Where each platform keeps content and state, and how: backups, purges, Data Protection")
    func storagePlans() {
        let iOS = StoragePlan.forPlatform("iOS")
        #expect(iOS.content == .applicationSupport && iOS.state == .applicationSupport)
        #expect(iOS.excludeContentFromBackup)
        #expect(iOS.protection == .completeUntilFirstUserAuthentication)
        #expect(StoragePlan.forPlatform("visionOS") == iOS)
        // tvOS may purge anything but a small defaults domain: content is a cache, state apart.
        let tvOS = StoragePlan.forPlatform("tvOS")
        #expect(tvOS.content == .caches && tvOS.state == .applicationSupport)
        #expect(!tvOS.excludeContentFromBackup, "Caches is never backed up")
        let macOS = StoragePlan.forPlatform("macOS")
        #expect(macOS.excludeContentFromBackup && macOS.protection == nil)
        // Mac Catalyst and iPad apps on a Mac: the iOS folders, no Data Protection (a Mac volume).
        let catalyst = StoragePlan.forPlatform("iOS", runningOnMac: true)
        #expect(catalyst.content == .applicationSupport && catalyst.excludeContentFromBackup)
        #expect(catalyst.protection == nil)
        #expect(StoragePlan.current == StoragePlan.forPlatform("Linux"))
        #expect(!StoragePlan.current.excludeContentFromBackup && StoragePlan.current.protection == nil)

        let base = { (location: StoragePlan.Location) in
            URL(fileURLWithPath: location == .caches ? "/Library/Caches" : "/Library/Application Support")
        }
        let folders = tvOS.folders(name: "App", base: base)
        #expect(folders.content.path == "/Library/Caches/FreshAir/App")
        #expect(folders.state.path == "/Library/Application Support/FreshAir/App.state")
    }

    @Test(
        "A refused file on a platform with Data Protection says the device may be locked; too many open files names the limit; an I/O error says what to do"
    )
    func lockedDeviceWords() {
        #expect(Disk.reason(EACCES, dataProtection: false) == String(cString: strerror(EACCES)))
        let locked = Disk.reason(EPERM, dataProtection: true)
        #expect(locked.hasPrefix(String(cString: strerror(EPERM))))
        #expect(locked.contains("Data Protection") && locked.contains("unlocked"))
        #expect(!Disk.reason(ENOSPC, dataProtection: true).contains("Data Protection"))
        let tooMany = Disk.reason(EMFILE, dataProtection: false)
        #expect(tooMany.hasPrefix(String(cString: strerror(EMFILE))) && tooMany.contains("ulimit -n"), "\(tooMany)")
        let failed = Disk.reason(EIO, dataProtection: false)
        #expect(failed.hasPrefix(String(cString: strerror(EIO))) && failed.contains("check the storage"), "\(failed)")
    }

    @Test("A store made with its state in its root keeps its install ID and floor when the state moves apart")
    func stateMovesApart() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("plan-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let old = BundleStore(root: folder.appendingPathComponent("App"))
        let installID = try old.installID()
        try old.highWaterMarks.raise(HighWaterMark(sequence: 7, digest: "ab"), for: "https://cdn/App.freshair/")

        let new = BundleStore(root: old.root, stateFolder: folder.appendingPathComponent("App.state"))
        try StoragePlan.current.prepare(new)
        #expect(try new.installID() == installID)
        #expect(try new.highWaterMarks.mark(for: "https://cdn/App.freshair/")?.sequence == 7)
        #expect(!FileManager.default.fileExists(atPath: old.root.appendingPathComponent("install-id").path))
    }
}
