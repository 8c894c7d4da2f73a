import Crypto
import Foundation
import TestSupport
import Testing

@testable import FreshAir

/// What a server without the signing key can send before any digest is checked: archives that
/// claim sizes past `Int64.max`, Zip64 fields that end early, trailers and indexes shaped to
/// make a parser quadratic, documents with a hundred thousand signatures. Each is refused with
/// a clear error, never a trap, and in time that grows linearly with the input.
///
/// The crafted archives are also fuzz regressions (`Fuzz/Regressions/<target>/`), replayed by
/// ``FuzzRegressionTests`` through the fuzz targets.
@Suite("Hostile bytes before the digest: no trap, linear time", .backgroundThread)
struct HostileInputTests {
    static let regressions = FuzzRegressionTests.fuzzFolder.appendingPathComponent("Regressions")

    /// Unpacks `bytes` as `format` into a fresh folder, as a package is unpacked while it downloads.
    func unpack(_ bytes: [UInt8], _ format: ArchiveFormat) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        if format == .zip {
            let file = folder.appendingPathComponent("input.zip")
            try Data(bytes).write(to: file)
            let out = folder.appendingPathComponent("out")
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            _ = try ArchiveReader.extract(
                file.path,
                format: .zip,
                into: out.path,
                singleFileName: "file",
                limits: ExtractionLimits()
            )
            return
        }
        let stream = try ArchiveStream(
            format: format,
            destination: folder.path,
            singleFileName: "file",
            limits: ExtractionLimits(),
            recordingLayout: true
        )!
        try bytes.withUnsafeBytes { try stream.feed($0) }
        _ = try stream.finish()
    }

    func regression(_ target: String, _ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: Self.regressions.appendingPathComponent(target).appendingPathComponent(name)))
    }

    @Test(
        "Tar sizes past Int64.max are a damaged archive, not a trap (signed or not, .tar and .tgz)",
        arguments: [
            ("tar", "pax-size-max.tar", ArchiveFormat.tar, "more than"),
            ("tgz", "pax-size-max.tgz", ArchiveFormat.tarGzip, "more than"),
            ("tar", "base256-folder-size.tar", ArchiveFormat.tar, "damaged archive"),
            ("tgz", "base256-folder-size.tgz", ArchiveFormat.tarGzip, "damaged archive"),
            ("tar", "pax-length-overflow.tar", ArchiveFormat.tar, "malformed pax"),
        ]
    )
    func tarSizes(target: String, name: String, format: ArchiveFormat, message: String) throws {
        let bytes = try regression(target, name)
        #expect {
            try unpack(bytes, format)
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    @Test(
        "Zip64 fields that end early or pass Int64.max are refused, not a trap",
        arguments: [
            ("zip64-a.zip", "shorter than its entry needs"),
            ("zip64-b.zip", "past any file"),
            ("zip64-c.zip", "outside the file"),
            ("zip64-d.zip", "lies outside the file"),
            ("zip64-e.zip", "damaged extra field"),
        ]
    )
    func zip64(name: String, message: String) throws {
        let bytes = try regression("zip", name)
        #expect(bytes.count < 160, "a package of about 150 bytes")
        #expect {
            try unpack(bytes, .zip)
        } throws: { error in
            (error as? ArchiveError).map { "\($0)".contains(message) } ?? false
        }
    }

    /// The CPU seconds this thread spends in `body`, the least of three runs. CPU time, not the
    /// clock's: in a full run a dozen threads share two cores, and a run four times as long met
    /// more of them than a short one (a ratio of 10 for linear work, measured).
    func fastest(_ body: () throws -> Void) rethrows -> Double {
        func threadSeconds() -> Double {
            var time = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
            return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        }
        var best = Double.infinity
        for _ in 0..<3 {
            let start = threadSeconds()
            try body()
            best = min(best, threadSeconds() - start)
        }
        return best
    }

    /// Linear work on four times the input takes about four times as long; quadratic, sixteen.
    /// The bound (8) leaves room for noise and still fails anything quadratic.
    func expectLinear(_ label: String, small: Double, large: Double) {
        #expect(large / max(small, 1e-4) < 8, "\(label): \(small) s, then \(large) s for 4 times the input")
    }

    /// A `.tar` whose end marker is followed by `length` bytes of alternating data and short zero runs.
    func tarWithTrailer(_ length: Int) -> [UInt8] {
        var header = [UInt8](repeating: 0, count: 512)
        header.replaceSubrange(0..<5, with: Array("a.txt".utf8))
        header.replaceSubrange(100..<108, with: Array("0000644\0".utf8))
        header.replaceSubrange(124..<136, with: Array("00000000003\0".utf8))
        header.replaceSubrange(257..<263, with: Array("ustar\0".utf8))
        header[156] = UInt8(ascii: "0")
        header.replaceSubrange(148..<156, with: Array("        ".utf8))
        let sum = header.reduce(0) { $0 + Int($1) }
        header.replaceSubrange(148..<156, with: Array(String(format: "%06o\0 ", sum).utf8))
        var bytes = header + Array("abc".utf8) + [UInt8](repeating: 0, count: 509 + 1024)
        for index in 0..<length { bytes.append(index % 4 == 0 ? 0x41 : 0) }
        return bytes
    }

    @Test("Claimed sizes that add up past Int64.max, or below its least, make an unknown total, not a trap")
    func claimedSizesOverflow() {
        #expect([Int64.max, 1].knownTotal() == nil)
        #expect([Int64.max, Int64.max].knownTotal() == nil)
        #expect([Int64.min, -1].knownTotal() == nil)
        #expect([Int64.max - 1, 1].knownTotal() == Int64.max)
        #expect([3, nil, 4].knownTotal() == nil)
        #expect([3, 4].knownTotal() == 7 && [Int64?]().knownTotal() == 0)
    }

    @Test("A .tar trailer of bytes and short zero runs is recorded in linear time")
    func layoutRecorderIsLinear() throws {
        func record(_ bytes: [UInt8]) throws {
            var parser = TarParser()
            var recorder = TarLayoutRecorder()
            // Fed in 4 KB pieces, as a network body arrives: each piece merges into what was kept.
            for start in stride(from: 0, to: bytes.count, by: 4096) {
                try bytes[start..<min(bytes.count, start + 4096)].withUnsafeBytes { piece in
                    try recorder.feed(piece, to: &parser) { _ in }
                }
            }
            #expect(recorder.recorded?.size == Int64(bytes.count))
        }
        let (small, large) = (tarWithTrailer(256 << 10), tarWithTrailer(1 << 20))
        expectLinear(
            "layout recorder",
            small: try fastest { try record(small) },
            large: try fastest { try record(large) }
        )
    }

    @Test("Blocks that all share one key are placed in linear time (a file of zeros, a hostile index)")
    func blockPlacementIsLinear() throws {
        func place(blocks: Int) throws -> Double {
            let zeros = [UInt8](repeating: 0, count: blocks * 4096)
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("zeros-\(UUID().uuidString)").path
            try Data(zeros).write(to: URL(fileURLWithPath: path))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let index = try ChunkIndex.make(fileAt: path)
            #expect(Set(index.blocks).count == 1, "every block has the same key")
            return try fastest {
                // With the old copy's index (blocks placed without a read), and without it (the
                // rolling search matches the one key at every block).
                for oldIndex in [index, nil] {
                    let found = try BlockFinder.find(
                        index,
                        opening: { try InputFile(path: path) },
                        oldIndex: oldIndex,
                        parts: 1
                    )
                    #expect(found.offsets.allSatisfy { $0 != nil })
                }
            }
        }
        expectLinear("block placement", small: try place(blocks: 4096), large: try place(blocks: 16384))
    }

    @Test("Signatures cost one verification per distinct trusted key, however many entries name it")
    func signaturesCheckedOncePerKey() throws {
        let signer = Curve25519.Signing.PrivateKey()
        let (trusted, other) = (TrustedKey(signer.publicKey), TrustedKey(Curve25519.Signing.PrivateKey().publicKey))
        let message = ManifestSignature.message(for: .object([("identity", .string("B")), ("sequence", JSONValue(1))]))
        let good = ManifestSignature(key: trusted.base64, signature: try signer.signature(for: message))
        let bogus = { (key: TrustedKey) in ManifestSignature(key: key.base64, signature: Data(count: 64)) }
        let flood = Array(repeating: bogus(trusted), count: 100_000)
        func tally(_ signatures: [ManifestSignature], _ keys: [TrustedKey], threshold: Int = 1) -> ReleaseFields.Tally {
            ReleaseFields.Tally(signatures, message: message, against: KeySet(keys: keys, threshold: threshold))
        }
        // 100,000 bogus entries for one trusted key: one check, and refused.
        #expect(tally(flood, [trusted]).checked == 1 && tally(flood, [trusted]).valid == 0)
        #expect(throws: ManifestError.self) {
            try ReleaseFields.verify(flood, message: message, against: KeySet(keys: [trusted]), source: "s")
        }
        // The threshold met stops the checks; a second key needed is checked once, at its first entry.
        #expect(tally([good, bogus(other)] + flood, [trusted, other]).checked == 1)
        let two = tally([good] + flood + [bogus(other)] + flood, [trusted, other], threshold: 2)
        #expect(two.checked == 2 && two.valid == 1)
        // One key signing twice counts once.
        #expect(tally([good, good], [trusted, other], threshold: 2).valid == 1)
    }

    @Test("A refused signer list names a few keys, not every entry a document sent")
    func untrustedSignersNamed() throws {
        let entries = (0..<1_000).map { index in
            JSONValue.object([
                ("key", .string("k\(index % 10)")), ("sig", .string(Data(count: 64).base64EncodedString())),
            ])
        }
        let fields = try ReleaseFields(document: .object([("signatures", .array(entries))]), source: "hostile")
        let keys = KeySet(keys: [TrustedKey(Curve25519.Signing.PrivateKey().publicKey)], threshold: 1)
        #expect {
            try fields.verify(keys, source: "hostile")
        } throws: { error in
            guard case .untrustedSigner(let named) = (error as? ManifestError)?.problem else { return false }
            return named == ["k0", "k1", "k2", "k3"]
        }
    }
}

@Suite("Every request names FreshAir")
struct UserAgentTests {
    @Test("A device's requests carry FreshAir/VERSION, after the app's own product when it sends one")
    func userAgent() {
        func agent(_ headers: [(name: String, value: String)]) -> [String] {
            var configuration = SyncConfiguration()
            configuration.headers = headers
            return Fetcher(transport: LocalFileTransport(), configuration: configuration).headers
                .filter { HTTPResponseHead.namesMatch($0.name, "User-Agent") }.map(\.value)
        }
        let token = "FreshAir/\(FreshAirVersion.current)"
        #expect(agent([]) == [token])
        #expect(agent([("user-agent", "MyApp/3.2")]) == ["MyApp/3.2 \(token)"])
        #expect(agent([("User-Agent", "breeze/1"), ("User-Agent", "Mine/2")]) == ["Mine/2 \(token)"])
    }
}
