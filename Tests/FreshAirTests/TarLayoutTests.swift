import Foundation
import Testing

@testable import FreshAir

@Suite("Tar layouts: a package rebuilt byte for byte from the files it installed")
struct TarLayoutTests {
    /// A folder with what packages hold: nested folders, an empty file, a name past ustar's
    /// 100 bytes, a non-ASCII name (a pax header), and a file larger than the scan's buffer.
    func makeSource(in folder: URL) throws {
        let deep = folder.appendingPathComponent("assets/" + String(repeating: "long-folder-name/", count: 8))
        try FileManager.default.createDirectory(at: deep, withIntermediateDirectories: true)
        try Data("deep\n".utf8).write(to: deep.appendingPathComponent("file-with-a-long-name.txt"))
        try Data().write(to: folder.appendingPathComponent("empty.txt"))
        try Data("Grüße\n".utf8).write(to: folder.appendingPathComponent("grüße-ünïcödé.txt"))
        var big = [UInt8](repeating: 0, count: 3 << 20)
        for index in stride(from: 0, to: big.count, by: 7) { big[index] = UInt8(truncatingIfNeeded: index / 7) }
        try Data(big).write(to: folder.appendingPathComponent("assets/big.bin"))
        let notes = (0..<20_000).map { "Line \($0) of the notes\n" }.joined()
        try Data(notes.utf8).write(to: folder.appendingPathComponent("notes.txt"))
    }

    func run(_ command: String, in folder: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.currentDirectoryURL = folder
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(command)")
    }

    @Test(
        "GNU tar's package (ustar, long names, pax) comes back exact; the layout round-trips and stays small",
        arguments: ["gnu", "pax"]
    )
    func exactRebuild(format: String) async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("tar-layout-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: work) }
        let source = work.appendingPathComponent("source")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        try makeSource(in: source)
        try run("tar --format=\(format) -cf ../content.tar .", in: source)
        let package = work.appendingPathComponent("content.tar")
        let installed = work.appendingPathComponent("installed")
        try FileManager.default.createDirectory(at: installed, withIntermediateDirectories: true)
        _ = try await ExtractingInstaller().install(package: package, format: .tar, into: installed)

        let layout = try TarLayout.scan(tarAt: package.path)
        #expect(try TarLayout(data: layout.serialized()) == layout)
        #expect(layout.serialized().count < 16 << 10, "\(layout.serialized().count) bytes of layout")
        let files = layout.segments.filter { if case .file = $0 { true } else { false } }
        #expect(files.count == 4, "every file but the empty one has data: \(files.count)")

        let rebuilt = ReassembledPackage(layout: layout, folder: installed.path)
        let original = try ChunkIndex.make(fileAt: package.path)
        let again = try ChunkIndex.make(reading: rebuilt, blockSize: ChunkIndex.defaultBlockSize)
        #expect(again == original, "the rebuilt package is the package, block for block")

        // A file changed since reads as zeros of its old size: its blocks no longer match, the rest do.
        try Data("other size".utf8).write(to: installed.appendingPathComponent("assets/big.bin"))
        let damaged = try ChunkIndex.make(
            reading: ReassembledPackage(layout: layout, folder: installed.path),
            blockSize: ChunkIndex.defaultBlockSize
        )
        #expect(damaged.fileSize == original.fileSize && damaged.fileDigest != original.fileDigest)
        let kept = Set(damaged.blocks)
        #expect(original.blocks.contains { kept.contains($0) })
        #expect(!original.blocks.allSatisfy { kept.contains($0) })
    }

    @Test("A package whose one top-level folder the installer moves up is rebuilt from the paths it was installed at")
    func movedUpFolder() async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("tar-layout-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: work) }
        let source = work.appendingPathComponent("cats-3")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        try makeSource(in: source)
        try run("tar -cf content.tar cats-3", in: work)
        let package = work.appendingPathComponent("content.tar")
        let installed = work.appendingPathComponent("installed")
        try FileManager.default.createDirectory(at: installed, withIntermediateDirectories: true)
        let records = try await ExtractingInstaller(topLevelFolderToStrip: "cats-3")
            .install(package: package, format: .tar, into: installed)
        #expect(records["notes.txt"] != nil, "the folder was moved up")

        let store = BundleStore(root: work.appendingPathComponent("store"))
        store.recordTarLayout(
            try TarLayout.scan(tarAt: package.path),
            of: package,
            for: 1,
            movedUp: "cats-3",
            installed: records
        )
        let layout = try TarLayout(data: Disk.read(store.tarLayoutPath(1)))
        let rebuilt = try ChunkIndex.make(
            reading: ReassembledPackage(layout: layout, folder: installed.path),
            blockSize: ChunkIndex.defaultBlockSize
        )
        #expect(rebuilt == (try ChunkIndex.make(fileAt: package.path)))
    }

    @Test(
        "A layout recorded while the package unpacks is the scanned one, however its bytes are split",
        arguments: [7, 512, 4_099, 1 << 20]
    )
    func recordedWhileUnpacking(pieceSize: Int) async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("tar-layout-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: work) }
        let source = work.appendingPathComponent("source")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        try makeSource(in: source)
        try run("tar --format=pax -cf ../content.tar .", in: source)
        let package = try Data(contentsOf: work.appendingPathComponent("content.tar"))
        let installed = work.appendingPathComponent("installed")
        try FileManager.default.createDirectory(at: installed, withIntermediateDirectories: true)

        let stream = try #require(
            try ArchiveStream(
                format: .tar,
                destination: installed.path,
                singleFileName: "content",
                limits: ExtractionLimits(),
                recordingLayout: true
            )
        )
        try package.withUnsafeBytes { bytes in
            for start in stride(from: 0, to: bytes.count, by: pieceSize) {
                try stream.feed(UnsafeRawBufferPointer(rebasing: bytes[start..<min(start + pieceSize, bytes.count)]))
            }
        }
        _ = try stream.finish()
        let recorded = try #require(stream.tarLayout)
        #expect(recorded == (try TarLayout.scan(tarAt: work.appendingPathComponent("content.tar").path)))
        let rebuilt = try ChunkIndex.make(
            reading: ReassembledPackage(layout: recorded, folder: installed.path),
            blockSize: ChunkIndex.defaultBlockSize
        )
        #expect(rebuilt == (try ChunkIndex.make(fileAt: work.appendingPathComponent("content.tar").path)))
    }

    @Test("Bytes after the end marker are kept (they are in the signed package) unless there are too many to hold")
    func bytesAfterTheEnd() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("tar-layout-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: work) }
        let source = work.appendingPathComponent("source")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        try Data("hello\n".utf8).write(to: source.appendingPathComponent("hello.txt"))
        try run("tar -cf ../content.tar . && head -c 300000 /dev/urandom >> ../content.tar", in: source)
        let package = work.appendingPathComponent("content.tar").path

        let layout = try TarLayout.scan(tarAt: package)
        #expect(layout.size == Int64(try Data(contentsOf: URL(fileURLWithPath: package)).count))
        let rebuilt = try ChunkIndex.make(
            reading: ReassembledPackage(layout: layout, folder: source.path),
            blockSize: ChunkIndex.defaultBlockSize
        )
        #expect(rebuilt == (try ChunkIndex.make(fileAt: package)))
        #expect(throws: ArchiveError.self) { try TarLayout.scan(tarAt: package, keptByteLimit: 200_000) }
    }

    @Test("A layout that is not one, whose lengths do not add up, or names a path outside is refused")
    func hostileLayouts() throws {
        let good = TarLayout(
            size: 1_034,
            segments: [.bytes([1, 2]), .zeros(1_024), .file(try BundlePath("a/b"), length: 8)]
        )
        let data = [UInt8](good.serialized())
        #expect(try TarLayout(data: Data(data)) == good)
        var wrongSize = data
        wrongSize[8] = 0x0B  // the package size no longer matches the segments
        var outside = data
        let path = outside.lastIndex(of: UInt8(ascii: "a"))!
        outside[path] = UInt8(ascii: "/")  // "/b": absolute
        for bad in [Data("FRCI".utf8), Data(wrongSize), Data(outside), Data(data.dropLast()), Data(data + [0])] {
            #expect(throws: ChunkIndexError.self) { try TarLayout(data: bad) }
        }
    }
}
