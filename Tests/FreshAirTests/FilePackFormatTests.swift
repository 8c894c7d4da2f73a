import Foundation
import Testing

@testable import FreshAir

@Suite("A root manifest's pack: what it may name, and when a sync takes it")
struct FilePackFormatTests {
    func load(_ pack: String) throws -> Manifest {
        try Manifest(
            data: Data(#"{"format": 2, "files": [{"filename": "a.md"}], "pack": \#(pack)}"#.utf8),
            source: "manifest.json"
        )
    }

    @Test("A pack is a plain relative path and a size")
    func readsThePack() throws {
        let manifest = try load(#"{"path": "files-0123456789abcdef.freshairpack", "size": 4096}"#)
        #expect(manifest.pack == FilePack(path: try BundlePath("files-0123456789abcdef.freshairpack"), size: 4096))
        #expect(try Manifest(data: Data(#"[{"filename": "a.md"}]"#.utf8), source: "m").pack == nil)
    }

    @Test(
        "A path out of the bundle, an absolute one, a missing or negative size, or no object refuses the manifest",
        arguments: [
            #"{"path": "../elsewhere.tar", "size": 1}"#, #"{"path": "/etc/passwd", "size": 1}"#,
            #"{"path": "p.tar"}"#, #"{"path": "p.tar", "size": -1}"#, #"{"path": "p.tar", "size": "big"}"#,
            #""p.tar""#, #"{"size": 1}"#,
        ]
    )
    func refusesBadPacks(pack: String) throws {
        #expect(throws: ManifestError.self) { try load(pack) }
    }

    @Test("Worth a request at 16 files that are at least half the pack's bytes, not below")
    func worthFetching() {
        #expect(PackDownload.isWorthFetching(packSize: 100_000, files: 16, bytes: 50_000))
        #expect(!PackDownload.isWorthFetching(packSize: 100_000, files: 15, bytes: 100_000))
        #expect(!PackDownload.isWorthFetching(packSize: 100_000, files: 1_000, bytes: 49_999))
        // Counted as a tar holds them: a header, and the bytes padded to 512.
        #expect(PackDownload.footprint(of: 0) == 512)
        #expect(PackDownload.footprint(of: 100) == 1024)
        #expect(PackDownload.footprint(of: 512) == 1024)
        #expect(PackDownload.footprint(of: 513) == 1536)
    }

    @Test("Candidates: small files with a size and a SHA-256, sorted by path bytes; not rebuilt ones")
    func candidates() throws {
        let sha256 = ContentHash.of(Array("x".utf8), using: .sha256)
        let sha1 = ContentHash.of(Array("x".utf8), using: .sha1)
        let files = [
            SelectedFile(path: try BundlePath("b.txt"), hash: sha256, size: 1),
            SelectedFile(path: try BundlePath("a.txt"), hash: sha256, size: 1),
            SelectedFile(path: try BundlePath("old.txt"), hash: sha1, size: 1),
            SelectedFile(path: try BundlePath("nosize.txt"), hash: sha256, size: nil),
            SelectedFile(path: try BundlePath("large.bin"), hash: sha256, size: FilePack.largestFile),
            SelectedFile(path: try BundlePath("Z.txt"), hash: sha256, size: 1),
        ]
        let jobs = DownloadJobs(downloading: files.indices)
        #expect(PackDownload.candidates(jobs, of: SelectedFiles(files), rebuilt: [:]) == [5, 1, 0])
    }

    @Test("A pack that brought fewer files than asked says how many, and what the author should do")
    func problemMessage() {
        #expect(PackDownload.problem(missed: 0, of: 40, failure: nil) == nil)
        let message = PackDownload.problem(missed: 3, of: 40, failure: nil) ?? ""
        #expect(message.hasPrefix("3 of its 40 files were missing or not the manifest's bytes"))
        #expect(message.contains("run `breeze generate` on the bundle and publish it again"))
    }
}
