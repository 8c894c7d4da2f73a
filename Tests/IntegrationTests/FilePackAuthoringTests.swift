import Foundation
import FreshAir
import Testing

@testable import BreezeKit

@Suite("breeze generate --pack")
struct FilePackAuthoringTests {
    let work: TemporaryFolder
    init() throws { work = try TemporaryFolder("pack-authoring") }

    func write(_ path: String, _ data: Data) throws {
        let url = work.path("B/" + path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
    }

    func packs() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: work.path("B").path).filter {
            $0.hasSuffix(FilePack.suffix)
        }
    }

    @Test("The same files make the same pack; a change makes a new one and removes the old; GNU tar lists it")
    func deterministicAndListed() async throws {
        try write("a.txt", Data("a\n".utf8))
        try write("sub/b.txt", Data("b\n".utf8))
        try write("large.bin", Data(repeating: 1, count: Int(FilePack.largestFile)))
        let bundle = work.path("B")
        _ = try await ManifestGenerator.run(bundle: bundle, sha256: true)
        let first = try FilePackWriter.run(bundle: bundle)
        #expect(first.files == 2)
        let again = try FilePackWriter.run(bundle: bundle)
        #expect(again.path == first.path)
        let listing = try await shell("tar -tf \(first.path!)", in: bundle)
        #expect(listing.split(separator: "\n") == ["a.txt", "sub/b.txt"])
        // The manifest names it, in the object form a bare list became; validate agrees.
        let manifest = try Manifest(data: Data(contentsOf: bundle.appendingPathComponent("manifest.json")), source: "m")
        #expect(manifest.pack?.path.string == first.path)
        #expect(await BundleValidator.run(bundle: bundle).isEmpty)
        // A later generate does not list the pack as content.
        let regenerated = try await ManifestGenerator.run(bundle: bundle, sha256: true)
        #expect(regenerated.added.isEmpty)

        try write("a.txt", Data("changed\n".utf8))
        _ = try await ManifestGenerator.run(bundle: bundle, sha256: true)
        let second = try FilePackWriter.run(bundle: bundle)
        #expect(second.path != first.path)
        #expect(try packs() == [second.path!])
    }

    @Test("A pack is cached as an object is: named by its digest, for a year; other .freshairpack names are content")
    func packCacheControl() {
        let policy = CachePolicy()
        #expect(
            policy.cacheControl(for: "App.freshair/files-0123456789abcdef.freshairpack") == CachePolicy.defaultImmutable
        )
        #expect(policy.cacheControl(for: "files-0123456789abcdef.freshairpack") == CachePolicy.defaultImmutable)
        for other in [
            "files-0123456789ABCDEF.freshairpack", "files-0123.freshairpack", "mine.freshairpack",
            "files-0123456789abcdef.tar",
        ] {
            #expect(policy.cacheControl(for: other) == CachePolicy.defaultContent, "\(other)")
        }
    }

    @Test("validate names a pack that is missing or of another size; --no-pack removes it")
    func missingPackAndRemoval() async throws {
        try write("a.txt", Data("a\n".utf8))
        let bundle = work.path("B")
        _ = try await ManifestGenerator.run(bundle: bundle, sha256: true)
        let report = try FilePackWriter.run(bundle: bundle)
        try FileManager.default.removeItem(at: bundle.appendingPathComponent(report.path!))
        let problems = await BundleValidator.run(bundle: bundle)
        #expect(problems.map(\.severity) == [.error])
        #expect(problems.first?.message.contains("is missing") == true)

        let run = try await BreezeBinary.run(["generate", bundle.path, "--no-pack"])
        #expect(run.status == 0, "\(run.error)")
        #expect(try packs().isEmpty)
        #expect(FilePackWriter.isNamed(in: bundle) == false)
        #expect(await BundleValidator.run(bundle: bundle).isEmpty)
    }
}
