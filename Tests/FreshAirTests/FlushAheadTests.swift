import Foundation
import TestSupport
import Testing

@testable import FreshAir

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Flush ahead: the disk starts on a version's files every so many, one flush at a time", .backgroundThread)
struct FlushAheadTests {
    @Test("A flush starts at every step-th file, and none while one runs")
    func everyStepOneAtATime() {
        var policy = FlushAheadPolicy(step: 3)
        var started = (1...3).map { _ in policy.created() }
        #expect(started == [false, false, true])
        #expect(policy.flushing)
        // Six more files while the first flush runs: none starts, the count goes on.
        started = (1...6).map { _ in policy.created() }
        #expect(!started.contains(true))
        policy.finished()
        #expect(!policy.flushing)
        let next = policy.created()
        #expect(next, "the files counted meanwhile are past the step: the next one starts a flush")
        policy.finished()
        started = (1...3).map { _ in policy.created() }
        #expect(started == [false, false, true])
    }

    @Test("A step below one is one: every file")
    func stepOfAtLeastOne() {
        var policy = FlushAheadPolicy(step: 0)
        let started = policy.created()
        #expect(policy.step == 1 && started)
    }

    #if os(Linux)
    @Test(
        "Files created in a staged folder start flushes in the background (Linux); the folder's own flush still works"
    )
    func confinedFolderFlushesAhead() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("flush-ahead-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folder = try ConfinedFolder(path: root)
        let ahead = try #require(folder.flushAhead)
        let count = FlushAhead.defaultStep * 2 + 1
        for index in 0..<count {
            let file = try folder.createFile(BundlePath(trusted: "d\(index % 7)/f\(index)"), replacing: false)
            try Array("x".utf8).withUnsafeBytes { try file.write($0) }
            file.close()
        }
        // The second step's flush starts only when the first has returned: at least one, at most two.
        #expect((1...2).contains(ahead.started), "\(ahead.started)")
        // Files that will be deleted soon do not count.
        let before = ahead.started
        let transient = try ConfinedFolder(path: root)
        for index in 0..<FlushAhead.defaultStep * 2 {
            try transient.createFile(BundlePath(trusted: "t/f\(index)"), replacing: false, startsWriteback: false)
                .close()
        }
        #expect(transient.flushAhead?.started == 0 && ahead.started == before)
        try folder.flushFileSystem()
    }
    #endif
}
