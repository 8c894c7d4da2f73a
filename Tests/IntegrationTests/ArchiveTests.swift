import Foundation
import FreshAir
import Testing

/// Archives made by the real tools (GNU tar, gzip, zip) and hostile ones made by Python's
/// tarfile and zipfile, unpacked by the installer every package and repository goes through.
@Suite("Archives: what real tools write, and what attackers write")
struct ArchiveTests {
    let work: TemporaryFolder

    init() throws {
        work = try TemporaryFolder("archives")
        try writeSampleContent(in: work.path("content"))
    }

    /// Installs with links that stay inside allowed (the sample has one); the default refuses
    /// every link, which `linksRefusedByDefault` checks.
    func install(
        _ name: String,
        limits: ExtractionLimits = ExtractionLimits(symbolicLinks: .allowInside)
    ) async throws -> (URL, [String: FileRecord]) {
        let destination = work.path("out-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
        let format = try #require(ArchiveFormat(fileName: name))
        let installer = ExtractingInstaller(limits: limits, singleFileName: "single.bin")
        let records = try await installer.install(package: work.path(name), format: format, into: destination)
        return (destination, records)
    }

    func expectSampleContent(in folder: URL, records: [String: FileRecord]) throws {
        #expect(folder.appendingPathComponent("art/cats/cat1.txt").text == "meow\n")
        #expect(
            try Data(contentsOf: folder.appendingPathComponent("art/big.bin"))
                == Data((0..<70_000).map { UInt8($0 % 253) })
        )
        #expect(
            try FileManager.default.destinationOfSymbolicLink(
                atPath: folder.appendingPathComponent("art/latest.txt").path
            ) == "cats/cat1.txt"
        )
        #expect(FileManager.default.isExecutableFile(atPath: folder.appendingPathComponent("run.sh").path))
        #expect(records["art/cats/cat1.txt"] == FileRecord(hash: .of(Array("meow\n".utf8), using: .sha256), size: 5))
    }

    @Test("GNU tar in ustar, pax and gnu formats, gzipped", arguments: ["ustar", "pax", "gnu"])
    func gnuTar(format: String) async throws {
        // Long names: a 150-byte path (ustar splits it into prefix and name) and, where the
        // format allows, a 180-byte single name (pax records, GNU ././@LongLink).
        let deep =
            String(repeating: "d", count: 60) + "/" + String(repeating: "e", count: 60) + "/"
            + String(repeating: "f", count: 28)
        try FileManager.default.createDirectory(
            at: work.path("content/\(deep)").deletingLastPathComponent(),
            withIntermediateDirectories: true
        )
        try Data("deep\n".utf8).write(to: work.path("content/\(deep)"))
        let long = String(repeating: "n", count: 180) + ".txt"
        if format != "ustar" { try Data("long\n".utf8).write(to: work.path("content/\(long)")) }
        try await shell("tar --format=\(format) -czf \(format).tgz -C content .", in: work.url)

        let (folder, records) = try await install("\(format).tgz")
        try expectSampleContent(in: folder, records: records)
        #expect(folder.appendingPathComponent(deep).text == "deep\n")
        if format != "ustar" { #expect(folder.appendingPathComponent(long).text == "long\n") }
    }

    @Test("An uncompressed .tar, a multi-member .tar.gz and a plain .gz")
    func tarMultiMemberAndPlainGzip() async throws {
        try await shell("tar -cf plain.tar -C content .", in: work.url)
        let (tarFolder, tarRecords) = try await install("plain.tar")
        try expectSampleContent(in: tarFolder, records: tarRecords)

        // Two gzip members, as `cat a.gz b.gz` makes: the tar stream spans both.
        try await shell(
            "head -c 20480 plain.tar | gzip -c > multi.tar.gz && tail -c +20481 plain.tar | gzip -c >> multi.tar.gz",
            in: work.url
        )
        let (multiFolder, multiRecords) = try await install("multi.tar.gz")
        try expectSampleContent(in: multiFolder, records: multiRecords)

        try await shell("gzip -c content/art/big.bin > big.gz", in: work.url)
        let (single, records) = try await install("big.gz")
        #expect(
            try Data(contentsOf: single.appendingPathComponent("single.bin"))
                == Data(contentsOf: work.path("content/art/big.bin"))
        )
        #expect(records["single.bin"]?.size == 70_000)
    }

    @Test("zip: stored and deflated entries, folders and links")
    func zip() async throws {
        try await shell("cd content && zip -q -r -y ../deflated.zip . && zip -q -0 -r -y ../stored.zip .", in: work.url)
        for name in ["deflated.zip", "stored.zip"] {
            let (folder, records) = try await install(name)
            try expectSampleContent(in: folder, records: records)
        }
    }

    @Test(
        "Hostile tar entries are refused with the entry named",
        arguments: [
            ("../evil.txt", "file", "", ArchiveError.Kind.unsafeEntry),
            ("/tmp/evil.txt", "file", "", .unsafeEntry),
            ("a/../../evil.txt", "file", "", .unsafeEntry),
            ("escape", "symlink", "/etc/passwd", .unsafeEntry),
            ("sub/escape", "symlink", "../../outside", .unsafeEntry),
            ("hard", "hardlink", "../outside", .unsafeEntry),
            ("dev", "chrdev", "", .unsupportedEntry),
            ("pipe", "fifo", "", .unsupportedEntry),
        ]
    )
    func hostileTar(name: String, kind: String, target: String, expected: ArchiveError.Kind) async throws {
        let script = """
            import io, sys, tarfile
            name, kind, target = sys.argv[1], sys.argv[2], sys.argv[3]
            with tarfile.open("hostile.tgz", "w:gz") as archive:
                ok = tarfile.TarInfo("fine.txt"); ok.size = 2
                archive.addfile(ok, io.BytesIO(b"ok"))
                info = tarfile.TarInfo(name)
                if kind == "file":
                    info.size = 4; archive.addfile(info, io.BytesIO(b"evil"))
                else:
                    info.type = {"symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE, "chrdev": tarfile.CHRTYPE, "fifo": tarfile.FIFOTYPE}[kind]
                    info.linkname = target
                    archive.addfile(info)
            """
        try script.write(to: work.path("make.py"), atomically: true, encoding: .utf8)
        try await shell("/usr/bin/python3 make.py '\(name)' \(kind) '\(target)'", in: work.url)
        await #expect {
            _ = try await install("hostile.tgz")
        } throws: { error in
            guard let failure = error as? FreshAirError, failure.path == "hostile.tgz",
                let archiveError = failure.archiveError
            else { return false }
            return archiveError.kind == expected && archiveError.entry == name
        }
        #expect(!FileManager.default.fileExists(atPath: "/tmp/evil.txt"))
        #expect(
            !FileManager.default.fileExists(
                atPath: work.url.deletingLastPathComponent().appendingPathComponent("evil.txt").path
            )
        )
    }

    @Test("Nothing is written through a link the archive made")
    func writeThroughLink() async throws {
        let script = """
            import io, tarfile
            with tarfile.open("through.tar", "w") as archive:
                link = tarfile.TarInfo("docs"); link.type = tarfile.SYMTYPE; link.linkname = "."
                archive.addfile(link)
                info = tarfile.TarInfo("docs/x.txt"); info.size = 1
                archive.addfile(info, io.BytesIO(b"x"))
            """
        try script.write(to: work.path("make.py"), atomically: true, encoding: .utf8)
        try await shell("/usr/bin/python3 make.py", in: work.url)
        await #expect {
            _ = try await install("through.tar")
        } throws: { error in
            guard let archiveError = (error as? FreshAirError)?.archiveError else { return false }
            return archiveError.kind == .unsafeEntry && "\(archiveError)".contains("through the link")
        }
    }

    @Test("A zip entry named ../ is refused")
    func hostileZip() async throws {
        try "import zipfile\nwith zipfile.ZipFile('hostile.zip', 'w') as z:\n    z.writestr('../evil.txt', 'evil')\n"
            .write(to: work.path("make.py"), atomically: true, encoding: .utf8)
        try await shell("/usr/bin/python3 make.py", in: work.url)
        await #expect {
            _ = try await install("hostile.zip")
        } throws: { error in
            guard let archiveError = (error as? FreshAirError)?.archiveError else { return false }
            return archiveError.kind == .unsafeEntry && archiveError.entry == "../evil.txt"
        }
    }

    @Test("A truncated archive, damaged data and an entry longer than its header are refused")
    func truncatedAndDamaged() async throws {
        try await shell(
            "tar -czf whole.tgz -C content . && head -c $(( $(stat -c %s whole.tgz) / 2 )) whole.tgz > half.tgz",
            in: work.url
        )
        await #expect {
            _ = try await install("half.tgz")
        } throws: { error in
            guard let archiveError = (error as? FreshAirError)?.archiveError else { return false }
            return archiveError.kind == .truncated
        }

        try await shell("tar -cf whole.tar -C content . && head -c 10000 whole.tar > cut.tar", in: work.url)
        await #expect {
            _ = try await install("cut.tar")
        } throws: { error in
            guard let archiveError = (error as? FreshAirError)?.archiveError else { return false }
            return archiveError.kind == .truncated
        }

        // Cut exactly between two entries: every entry so far is whole, but the archive is not.
        for (name, cut) in [
            ("between.tar", "head -c 1024 whole2.tar"), ("between.tgz", "head -c 1024 whole2.tar | gzip -c"),
        ] {
            try await shell(
                "printf abc > one.txt && printf def > two.txt && tar --format=ustar -cf whole2.tar one.txt two.txt && \(cut) > \(name)",
                in: work.url
            )
            await #expect {
                _ = try await install(name)
            } throws: { error in
                guard let archiveError = (error as? FreshAirError)?.archiveError else { return false }
                return archiveError.kind == .truncated && "\(archiveError)".contains("end-of-archive")
            }
        }

        // 512 extra bytes after the first entry's content: its real length exceeds its header.
        let script = """
            import io, tarfile
            data = io.BytesIO()
            with tarfile.open(fileobj=data, mode="w", format=tarfile.USTAR_FORMAT) as archive:
                for name in ("one.txt", "two.txt"):
                    info = tarfile.TarInfo(name); info.size = 3
                    archive.addfile(info, io.BytesIO(b"abc"))
            raw = data.getvalue()
            open("longer.tar", "wb").write(raw[:1024] + b"X" * 512 + raw[1024:])
            """
        try script.write(to: work.path("make.py"), atomically: true, encoding: .utf8)
        try await shell("/usr/bin/python3 make.py", in: work.url)
        await #expect {
            _ = try await install("longer.tar")
        } throws: { error in
            guard let archiveError = (error as? FreshAirError)?.archiveError else { return false }
            return archiveError.kind == .corrupt && "\(archiveError)".contains("longer than its header")
        }

        try Data("this is not gzip at all".utf8).write(to: work.path("junk.tgz"))
        await #expect {
            _ = try await install("junk.tgz")
        } throws: { error in
            guard let archiveError = (error as? FreshAirError)?.archiveError else { return false }
            return archiveError.kind == .corrupt
        }
    }

    @Test("Symbolic links are refused by default, with the entry named")
    func linksRefusedByDefault() async throws {
        try await shell("tar -czf linked.tgz -C content .", in: work.url)
        await #expect {
            _ = try await install("linked.tgz", limits: ExtractionLimits())
        } throws: { error in
            guard let archiveError = (error as? FreshAirError)?.archiveError else { return false }
            return archiveError.kind == .unsafeEntry && archiveError.entry == "./art/latest.txt"
                && "\(archiveError)".contains("symbolic links are refused")
        }
    }

    @Test("A name that is not valid UTF-8, or two names that are one on a Mac, are refused")
    func badNames() async throws {
        let script = """
            import io, tarfile
            for name, entries in (("latin1.tar", [b"caf\\xe9.txt"]), ("case.tar", [b"Read.md", b"read.md"])):
                with tarfile.open(name, "w", format=tarfile.GNU_FORMAT, encoding="latin-1") as archive:
                    for entry in entries:
                        info = tarfile.TarInfo(entry.decode("latin-1")); info.size = 1
                        archive.addfile(info, io.BytesIO(b"x"))
            """
        try script.write(to: work.path("make.py"), atomically: true, encoding: .utf8)
        try await shell("/usr/bin/python3 make.py", in: work.url)
        for (name, expected) in [("latin1.tar", "not valid UTF-8"), ("case.tar", "differ only by case")] {
            await #expect {
                _ = try await install(name)
            } throws: { error in
                guard let archiveError = (error as? FreshAirError)?.archiveError else { return false }
                return archiveError.kind == .unsafeEntry && "\(archiveError)".contains(expected)
            }
        }
    }

    @Test("A gzip bomb is stopped by the expansion ratio with no cap configured")
    func expansionRatio() async throws {
        // 64 MiB of zeros compress about 1,000 to 1; the default allows 100 to 1 past 16 MiB.
        try await shell(
            "head -c 67108864 /dev/zero > zeros.bin && tar -czf ratio.tgz zeros.bin && rm zeros.bin",
            in: work.url
        )
        await #expect {
            _ = try await install("ratio.tgz", limits: ExtractionLimits())
        } throws: { error in
            guard let archiveError = (error as? FreshAirError)?.archiveError else { return false }
            return archiveError.kind == .tooLarge && "\(archiveError)".contains("100:1 limit")
        }
    }

    @Test("A gzip bomb stops at the configured cap")
    func gzipBomb() async throws {
        // 64 MiB of zeros compress to about 64 KB.
        try await shell(
            "head -c 67108864 /dev/zero > zeros.bin && tar -czf bomb.tgz zeros.bin && gzip -c zeros.bin > bomb.gz && rm zeros.bin",
            in: work.url
        )
        let limits = ExtractionLimits(maxTotalBytes: 1 << 20)
        for name in ["bomb.tgz", "bomb.gz"] {
            await #expect {
                _ = try await install(name, limits: limits)
            } throws: { error in
                guard let archiveError = (error as? FreshAirError)?.archiveError else { return false }
                return archiveError.kind == .tooLarge
            }
        }
    }
}
