import BreezeKit
import Foundation
import FreshAir
import Testing

@Suite("Durability: a new version is on disk before the live link names it")
struct DurabilityTests {
    /// The calls `strace -f` saw, in order, as (call, first argument, second argument).
    static func calls(_ trace: String) -> [(call: String, arguments: [String])] {
        trace.split(separator: "\n").compactMap { line in
            // "1234  rename(\"/a\", \"/b\") = 0"; unfinished/resumed halves are rare for these calls.
            guard let open = line.firstIndex(of: "("), let close = line.lastIndex(of: ")"), line.hasSuffix("= 0") else {
                return nil
            }
            let name = line[..<open].split(separator: " ").last.map(String.init) ?? ""
            let arguments = line[line.index(after: open)..<close].split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            return (name, arguments)
        }
    }

    static func requireStrace() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") else {
            throw TestSetupError("strace is not installed: run scripts/test, which installs it")
        }
    }

    @Test(
        "strace: syncfs (every file, folder and the record) before the link's rename, then an fsync of the link's folder"
    )
    func flushedBeforeTheSwitch() async throws {
        try Self.requireStrace()
        try await PublishedFolder.with(.nginx) { server in
            try ExampleBundle.write(in: server.root)
            let local = try TemporaryFolder("durability")
            let live = local.path("live").path
            let url = server.url.appendingPathComponent(ExampleBundle.name + "/").absoluteString
            try await shell(
                "strace -f -qq -e trace=syncfs,fsync,fdatasync,rename,renameat,renameat2 -o trace.txt "
                    + "'\(try BreezeBinary.path)' sync '\(url)' '\(live)' --env appVersion=0.9 --env platform=iOS --env systemVersion=9.0",
                in: local.url
            )
            let calls = Self.calls(local.path("trace.txt").text ?? "")
            let switchIndex = try #require(
                calls.firstIndex { $0.call.hasPrefix("rename") && $0.arguments.last == live },
                "no rename onto the live link in \(calls.map(\.call))"
            )
            let versionMove = try #require(
                calls.firstIndex { $0.call.hasPrefix("rename") && $0.arguments.last?.hasSuffix("/versions/1") == true }
            )
            let flush = try #require(
                calls[versionMove..<switchIndex].firstIndex { $0.call == "syncfs" },
                "no syncfs between the version's move into versions/ and the switch"
            )
            #expect(flush > versionMove && flush < switchIndex)
            #expect(
                calls[(switchIndex + 1)...].contains { $0.call == "fsync" },
                "the link's folder is flushed after the switch"
            )
            #expect(local.path("live/manifest.json").text != nil)
        }
    }
}

extension DurabilityTests {
    @Test("strace: a check that finds nothing new flushes nothing: a 304 costs no fsync, only the lock and a read")
    func noChangeFlushesNothing() async throws {
        try Self.requireStrace()
        try await PublishedFolder.with(.nginx) { server in
            try ExampleBundle.write(in: server.root)
            let local = try TemporaryFolder("durability-304")
            let url = server.url.appendingPathComponent(ExampleBundle.name + "/").absoluteString
            let sync = "'\(try BreezeBinary.path)' sync '\(url)' '\(local.path("live").path)'"
            try await shell(sync, in: local.url)
            let output = try await shell(
                "strace -f -qq -e trace=syncfs,fsync,fdatasync,sync_file_range -o trace.txt " + sync,
                in: local.url
            )
            #expect(output.contains("304"), "\(output)")
            let flushes = Self.calls(local.path("trace.txt").text ?? "").map(\.call)
            #expect(flushes.isEmpty, "flushed on a check that changed nothing: \(flushes)")
        }
    }

    @Test("strace: a large file rebuilt from chunks is written back as it is assembled, not all at the final flush")
    func deltaWritesBackAsItGoes() async throws {
        try Self.requireStrace()
        try await PublishedFolder.with(.nginx) { server in
            let published = try await ChunkDeltaTests.Published(into: server.root)
            let local = try TemporaryFolder("durability-delta")
            let url = server.url.appendingPathComponent("Big.freshair/").absoluteString
            let sync = "'\(try BreezeBinary.path)' sync '\(url)' '\(local.path("live").path)'"
            try await shell(sync, in: local.url)
            try await published.edit(regions: 4)
            let output = try await shell(
                "strace -f -qq -e trace=sync_file_range,syncfs -o trace.txt " + sync,
                in: local.url
            )
            #expect(output.contains("of unchanged chunks kept"), "\(output)")
            let calls = Self.calls(local.path("trace.txt").text ?? "")
            let flush = try #require(calls.firstIndex { $0.call == "syncfs" }, "no syncfs in \(calls.map(\.call))")
            // Almost all of the 16 MB is copied from the old copy: it is handed to the disk in
            // steps of 8 MB while the pass goes on, instead of all of it by the flush.
            let requested = calls[..<flush].filter { $0.call == "sync_file_range" }
                .compactMap { $0.arguments.count > 2 ? Int($0.arguments[2]) : nil }.reduce(0, +)
            #expect(requested >= 8 << 20, "\(requested) bytes handed to write-back before the flush: \(calls)")
            #expect(try Data(contentsOf: local.path("live/big.bin")) == Data(published.bytes))
        }
    }
}

@Suite("After the switch: tidying is best-effort")
struct TidyingTests {
    @Test("A version that cannot be removed after the switch does not turn a successful update into a failure")
    func failedCleanupIsNotAFailure() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr") else {
            throw TestSetupError("chattr (e2fsprogs) is missing")
        }
        try await PublishedFolder.with(.nginx) { server in
            let local = try TemporaryFolder("tidy")
            let live = local.path("live").path
            let url = server.url.appendingPathComponent(ExampleBundle.name + "/").absoluteString
            let sync = {
                try await BreezeBinary.run([
                    "sync", url, live, "--env", "appVersion=0.9", "--env", "platform=iOS", "--env", "systemVersion=9.0",
                ])
            }
            for version in 1...2 {
                try ExampleBundle.write(in: server.root, overrides: ["Embed1.freshair/foo.md": "version \(version)\n"])
                try FileManager.default.setAttributes(
                    [.modificationDate: Date().addingTimeInterval(Double(version * 10))],
                    ofItemAtPath: server.root.appendingPathComponent(ExampleBundle.name + "/manifest.json").path
                )
                try await sync().expectSuccess()
            }
            // Version 1 is what the next activation removes: make one of its files immutable.
            let pinned = local.path(".live.freshair-store/versions/1/manifest.json").path
            try await shell("chattr +i '\(pinned)'", in: local.url)
            defer {
                _ = try? Process.run(URL(fileURLWithPath: "/usr/bin/chattr"), arguments: ["-i", pinned]).waitUntilExit()
            }
            try ExampleBundle.write(in: server.root, overrides: ["Embed1.freshair/foo.md": "version 3\n"])
            try FileManager.default.setAttributes(
                [.modificationDate: Date().addingTimeInterval(30)],
                ofItemAtPath: server.root.appendingPathComponent(ExampleBundle.name + "/manifest.json").path
            )
            let third = try await sync()
            #expect(
                third.status == 0 && third.output.hasPrefix("Updated to version 3"),
                "\(third.output)\(third.error)"
            )
            #expect(local.path("live/Embed1.freshair/foo.md").text == "version 3\n")
        }
    }
}

extension DurabilityTests {
    @Test(
        "strace: a large file's blocks are set aside once, for its listed size; not for a size only the server announces",
        arguments: [true, false]
    )
    func largeFileBlocksSetAside(listsSize: Bool) async throws {
        try Self.requireStrace()
        try await PublishedFolder.with(.nginx) { server in
            let bundle = server.root.appendingPathComponent("Large.freshair")
            try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
            let size = 9 << 20
            try Data(repeating: 7, count: size).write(to: bundle.appendingPathComponent("large.bin"))
            try Data("small\n".utf8).write(to: bundle.appendingPathComponent("small.txt"))
            #expect(try await BreezeBinary.run(["generate", bundle.path]).status == 0)
            if !listsSize {
                // A manifest of the first format may leave sizes out: Content-Length is then all there is.
                let manifest = bundle.appendingPathComponent("manifest.json")
                let entries = try #require(
                    try JSONSerialization.jsonObject(with: Data(contentsOf: manifest)) as? [[String: Any]]
                )
                try JSONSerialization.data(withJSONObject: entries.map { $0.filter { $0.key != "size" } }).write(
                    to: manifest
                )
            }
            let local = try TemporaryFolder("reserve")
            let url = server.url.appendingPathComponent("Large.freshair/").absoluteString
            let output = try await shell(
                "strace -f -qq -e trace=fallocate -o trace.txt '\(try BreezeBinary.path)' sync '\(url)' '\(local.path("live").path)'",
                in: local.url
            )
            #expect(output.hasPrefix("Updated to version 1"), "\(output)")
            let reserved = Self.calls(local.path("trace.txt").text ?? "").filter { $0.call == "fallocate" }
            if listsSize {
                #expect(reserved.count == 1, "\(reserved)")
                #expect(
                    reserved.first?.arguments.dropFirst().elementsEqual(["FALLOC_FL_KEEP_SIZE", "0", "\(size)"])
                        == true,
                    "\(reserved)"
                )
            } else {
                #expect(reserved.isEmpty, "\(reserved)")
            }
            #expect(try Data(contentsOf: local.path("live/large.bin")).count == size)
        }
    }
}

extension DurabilityTests {
    @Test(
        "strace: many files start syncfs calls while they are written; the last, before the switch, goes through the staged folder's first descriptor"
    )
    func flushedAheadThenThroughTheStagedFolder() async throws {
        try Self.requireStrace()
        try await PublishedFolder.with(.nginx) { server in
            let bundle = server.root.appendingPathComponent("Many.freshair")
            let count = 2_100  // past two steps of FlushAhead (1,024 files)
            for index in 0..<count {
                let folder = bundle.appendingPathComponent("d\(index % 10)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try Data("\(index)\n".utf8).write(to: folder.appendingPathComponent("f\(index).txt"))
            }
            #expect(try await BreezeBinary.run(["generate", bundle.path]).status == 0)
            let local = try TemporaryFolder("flush-ahead")
            let live = local.path("live").path
            let url = server.url.appendingPathComponent("Many.freshair/").absoluteString
            try await shell(
                "strace -f -qq -e trace=openat,close,syncfs,rename -o trace.txt '\(try BreezeBinary.path)' sync '\(url)' '\(live)'",
                in: local.url
            )
            #expect(FileManager.default.fileExists(atPath: local.path("live/d9/f2099.txt").path))
            // "1234  openat(AT_FDCWD, \"/…/staging/1\", O_RDONLY|O_CLOEXEC|O_DIRECTORY) = 14"
            let lines = (local.path("trace.txt").text ?? "").split(separator: "\n").map(String.init)
            let staged = try #require(
                lines.firstIndex {
                    $0.contains("openat(AT_FDCWD, \"") && $0.contains("/staging/1\", O_RDONLY|")
                        && $0.contains("O_DIRECTORY")
                },
                "the staged folder was never opened"
            )
            let descriptor = try #require(
                lines[staged].split(separator: "=").last.map { $0.trimmingCharacters(in: .whitespaces) }
            )
            let moved = try #require(lines.firstIndex { $0.contains("rename(") && $0.contains("/versions/1\")") })
            let switched = try #require(lines.firstIndex { $0.contains("rename(") && $0.contains("\"\(live)\")") })
            let early = lines[staged..<moved].filter { $0.contains("syncfs(") }
            #expect(!early.isEmpty, "no syncfs while the files were written")
            let last = try #require(
                lines[moved..<switched].first { $0.contains("syncfs(") },
                "no syncfs before the switch"
            )
            #expect(
                ["syncfs(\(descriptor))", "syncfs(\(descriptor) <unfinished"].contains { last.contains($0) },
                "\(last), staged folder opened as \(descriptor)"
            )
            #expect(
                !lines[staged..<moved].contains { $0.contains("close(\(descriptor))") },
                "the staged folder's descriptor was closed (and maybe reused) before the last flush"
            )
        }
    }
}

extension DurabilityTests {
    @Test(
        "A disk whose writes fail while a version is written (ext4 on a full loop device): the sync fails, says why, and the live version stays",
        .enabled(if: FailingDisk.isAvailable)
    )
    func failingDiskKeepsTheLiveVersion() async throws {
        // 19 MB in 1,200 files: more than the disk has room for, past a flush ahead.
        let second = try await Self.syncOntoAFailingDisk(files: 1_200, each: 16 << 10)
        // Which call meets the failure first depends on when write-back runs: a create or
        // write once ext4 has given up on its journal, a flush, or the lock taken again.
        let disksWords = [EIO, ENOSPC, EROFS].map { String(cString: strerror($0)) }
        #expect(disksWords.contains { second.error.contains($0) }, "\(second.error)")
    }

    @Test(
        "A disk that fails only in write-back (fewer files than a flush ahead): the flush before the switch reports it, and the live version stays",
        .enabled(if: FailingDisk.isAvailable)
    )
    func failedFlushKeepsTheLiveVersion() async throws {
        // 19 MB in 300 files: every create and write lands in the page cache, no flush ahead
        // starts (it waits for 1,024 files), and write-back does not start on its own (10% of
        // memory dirty, or 30 s): the first call to meet the full disk is the final flush.
        let second = try await Self.syncOntoAFailingDisk(files: 300, each: 64 << 10)
        #expect(second.error.contains("syncfs"), "\(second.error)")
        #expect(second.error.contains(String(cString: strerror(EIO))), "\(second.error)")
    }

    /// Syncs a small first version onto a ``FailingDisk`` of 12 MB, then a second one of `files`
    /// files of `each` bytes, more than it has room for; checks that the second sync failed and
    /// left the first live, and answers the second sync.
    static func syncOntoAFailingDisk(files: Int, each: Int) async throws -> BreezeBinary.Run {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = server.root.appendingPathComponent("Worn.freshair")
            try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
            try Data("first\n".utf8).write(to: bundle.appendingPathComponent("notes.txt"))
            #expect(try await BreezeBinary.run(["generate", bundle.path]).status == 0)
            let url = server.url.appendingPathComponent("Worn.freshair/").absoluteString
            return try await FailingDisk.with(room: 12 << 20) { disk in
                let live = disk.appendingPathComponent("store/live")
                let first = try await BreezeBinary.run(["sync", url, live.path])
                #expect(first.status == 0, "\(first.error)")
                for index in 0..<files {
                    let folder = bundle.appendingPathComponent("d\(index % 10)")
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    // Each file's bytes its own: identical files would be fetched and stored once.
                    let bytes =
                        Data("\(index)\n".utf8) + Data(repeating: UInt8(truncatingIfNeeded: index), count: each)
                    try bytes.write(to: folder.appendingPathComponent("f\(index).bin"))
                }
                try Data("second\n".utf8).write(to: bundle.appendingPathComponent("notes.txt"))
                #expect(try await BreezeBinary.run(["generate", bundle.path]).status == 0)
                try FileManager.default.setAttributes(
                    [.modificationDate: Date().addingTimeInterval(30)],
                    ofItemAtPath: bundle.appendingPathComponent("manifest.json").path
                )
                let second = try await BreezeBinary.run(["sync", url, live.path])
                #expect(second.status != 0, "\(second.output)")
                #expect(live.appendingPathComponent("notes.txt").text == "first\n")
                #expect(!FileManager.default.fileExists(atPath: live.appendingPathComponent("d0").path))
                return second
            }
        }
    }
}
