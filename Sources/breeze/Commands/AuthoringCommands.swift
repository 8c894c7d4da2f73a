import ArgumentParser
import BreezeKit
import Foundation
import FreshAir
import FreshAirAsyncHTTPClient

struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Write a starter .freshair bundle that validates: manifest, release notes, one localized feature."
    )

    @Argument(help: "The bundle folder to create.", completion: .file()) var directory: String
    @Flag(help: "Print JSON: {\"bundle\", \"files\"}.") var json = false

    func run() async throws {
        let bundle = URL(fileURLWithPath: directory)
        do {
            let report = try await BundleStarter.write(to: bundle)
            struct Created: Encodable {
                var bundle: String
                var files: [String]
            }
            if json { return print(try JSONOutput.encode(Created(bundle: bundle.path, files: report.added))) }
            // The next steps as README's quick start gives them, with this bundle's name.
            let (site, key) = Self.quickStartPaths(apartFrom: bundle)
            print(
                """
                Created \(bundle.path) with \(report.added.count) files listed in manifest.json.
                Next: edit it; `breeze keygen \(key)` once; then after each edit
                  breeze release \(Self.quoted(directory)) \(Self.quoted(site + "/" + bundle.lastPathComponent)) --key \(key)
                (generate, sign, validate and publish to a folder; `breeze serve \(site)` serves it).
                """
            )
        } catch { throw CommandFailure(error) }
    }

    /// Where the quick start's files go, outside the bundle: the served folder (`site`, unless
    /// the bundle was made inside it: publishing into the folder being published is refused,
    /// and serving it would serve the work in progress; then `public`, or `www`) and the key.
    /// Beside the bundle (`../site`, `../release.key`) when it was made here (`breeze init .`).
    static func quickStartPaths(apartFrom bundle: URL) -> (site: String, key: String) {
        var base = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        var up = ""
        while BundleFolder.lies(base, inside: bundle), base.path != "/" {
            base.deleteLastPathComponent()
            up += "../"
        }
        let name = ["site", "public", "www"].first { name in
            let folder = base.appendingPathComponent(name)
            return !BundleFolder.lies(bundle, inside: folder) && !BundleFolder.lies(folder, inside: bundle)
        }
        return (up + (name ?? "site"), up + "release.key")
    }

    /// `path` as a shell reads it back: single-quoted unless it is plain.
    static func quoted(_ path: String) -> String {
        let plain = path.unicodeScalars.allSatisfy {
            CharacterSet.alphanumerics.contains($0) || "._/-+".unicodeScalars.contains($0)
        }
        return plain && !path.isEmpty ? path : "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

struct HashCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash",
        abstract: "Recompute every entry's digest and size in manifest.json and its child manifests.",
        discussion:
            "Children first, so parents record their children's new digests. With --check nothing changes and the exit code is 1 when anything is stale."
    )

    @Argument(help: "The bundle folder.", completion: .file()) var bundle = "."
    @Flag(help: "Change nothing; list stale entries and exit 1 if there are any (for CI).") var check = false
    @Flag(help: "Move SHA-1 manifests to SHA-256.") var sha256 = false
    @Option(
        help:
            "Files of at least this many MB get a chunk index (<file>.freshair-chunks), so devices fetch only changed chunks; 0: none."
    )
    var chunkThreshold = 8
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let report: BundleHasher.Report
        do {
            report = try await BundleHasher.run(
                bundle: URL(fileURLWithPath: bundle),
                check: check,
                sha256: sha256,
                chunkThreshold: chunkThreshold > 0 ? Int64(chunkThreshold) << 20 : nil
            )
        } catch { throw CommandFailure(error) }
        if json {
            print(try JSONOutput.encode(report))
        } else {
            for stale in report.stale {
                print(
                    "\(check ? "stale" : "updated"): \(stale.manifest): \(stale.filename) \(stale.recorded.map { String($0.prefix(12)) } ?? "(none)") → \(stale.actual.prefix(12))"
                )
            }
            for missing in report.missing { print("missing: \(missing)") }
            print(
                "\(counted(report.filesHashed, "file")) hashed; \(report.stale.count) \(check ? "stale" : "updated"); \(report.missing.count) missing."
                    + (check ? "" : " \(counted(report.manifestsWritten.count, "manifest")) written.")
                    + (report.sequence.map {
                        check ? " The root manifest would get sequence \($0)." : " Root manifest sequence: \($0)."
                    } ?? "")
                    + (report.signaturesRemoved > 0 && !check
                        ? " Its signatures no longer matched and were removed: run `breeze sign` again." : "")
            )
        }
        if !report.missing.isEmpty || (check && !report.stale.isEmpty) { throw ExitCode(1) }
    }
}

struct GenerateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract:
            "Write or update manifest.json from the folder, inferring conditions from paths, asset catalogs and release notes."
    )

    @Argument(help: "The bundle folder.", completion: .file()) var bundle = "."
    @Flag(help: "Use SHA-256 even where a manifest uses SHA-1.") var sha256 = false
    @Option(help: "The language every device falls back to: its .lproj gets no language condition.")
    var developmentLanguage = "en"
    @Flag(
        inversion: .prefixedNo,
        help: ArgumentHelp(
            "Write the small files into one .tar beside the manifest, so a device's first sync takes them in one request.",
            discussion:
                "Once a bundle has a pack, every `breeze generate` keeps it current; --no-pack removes it. The root manifest becomes an object (\"format\": 2) if it was a bare list."
        )
    )
    var pack: Bool?
    @Flag(help: "Print JSON: {\"added\", \"removed\", \"digestsUpdated\", \"signaturesRemoved\", \"pack\"}.") var json =
        false

    func run() async throws {
        let report: ManifestGenerator.Report
        do {
            report = try await ManifestGenerator.run(
                bundle: URL(fileURLWithPath: bundle),
                sha256: sha256,
                developmentLanguage: developmentLanguage,
                pack: pack
            )
        } catch { throw CommandFailure(error) }
        let (packed, signaturesRemoved) = (report.pack, report.hash.signaturesRemoved)
        // Entries added just now get their first digest: not an update.
        let digestsUpdated = report.hash.stale.filter { $0.recorded != nil }.count
        struct Generated: Encodable {
            var added: [String]
            var removed: [String]
            var digestsUpdated: Int
            var signaturesRemoved: Int
            var pack: String?
        }
        if json {
            let generated = Generated(
                added: report.added,
                removed: report.removed,
                digestsUpdated: digestsUpdated,
                signaturesRemoved: signaturesRemoved,
                pack: packed?.path
            )
            return print(try JSONOutput.encode(generated))
        }
        for path in report.added { print("added: \(path)") }
        for path in report.removed { print("removed: \(path)") }
        print(
            "\(report.added.count) added, \(report.removed.count) removed, \(counted(digestsUpdated, "digest")) updated."
        )
        if let packed, let path = packed.path {
            print("Pack: \(path), \(counted(packed.files, "file")) (\(ByteCount(packed.bytes))).")
        } else if pack == true {
            print(
                "No pack: no file is under \(ByteCount(FilePack.largestFile)) with a SHA-256 digest (--sha256 gives every file one)."
            )
        }
        if signaturesRemoved > 0 {
            print(
                "The content changed, so its \(counted(signaturesRemoved, "signature")) no longer held and "
                    + "\(signaturesRemoved == 1 ? "was" : "were") removed: `breeze release` or `breeze sign` "
                    + "signs the new release. With nothing changed, signatures are kept."
            )
        }
    }
}

struct ValidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract:
            "Check a bundle (JSON, shapes, digests, conditions, paths, translations, images), or install a package or repository as a device would."
    )

    @Argument(
        help: "The bundle folder, a package file (.tgz, .tar.gz, .tar, .gz, .zip) or a repository folder.",
        completion: .file()
    )
    var target = "."
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let source = URL(fileURLWithPath: target)
        let kind = ReleasePipeline.kind(of: source)
        // Nothing there, or a file that is not an archive: said as for any folder argument.
        if kind == nil || (kind == "package" && ArchiveFormat(fileName: target) == nil) {
            try CommandFailure.requireFolder(target)
        }
        let problems: [BundleValidator.Problem]
        let holds: String?
        switch kind {
        case "package":
            let (found, contents) = await PackageValidator.run(package: source)
            problems = found
            holds = contents.map {
                "\(counted($0.files, "file")), \(ByteCount($0.bytes)), \(Self.signed(by: $0.signers))"
            }
        case "repository":
            let (found, contents) = await RepositoryValidator.run(repository: source)
            problems = found
            holds = contents.map { contents in
                let versions = contents.bundles.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                return "\(counted(contents.bundles.count, "bundle")) (\(versions.joined(separator: ", "))), "
                    + "\(counted(contents.files, "file")), \(ByteCount(contents.bytes)), \(Self.signed(by: contents.signers))"
            }
        default:
            problems = await BundleValidator.run(bundle: source)
            holds = nil
        }
        if json {
            print(try JSONOutput.encode(problems))
        } else {
            for problem in problems { print(problem) }
            let errors = problems.filter { $0.severity == .error }.count
            let warnings = problems.count - errors
            if let holds, errors == 0 {
                print("Valid\(warnings > 0 ? " (\(counted(warnings, "warning")))" : ""): \(holds).")
            } else {
                print(problems.isEmpty ? "Valid." : "\(counted(errors, "error")), \(counted(warnings, "warning")).")
            }
        }
        if problems.contains(where: { $0.severity == .error }) { throw ExitCode(1) }
    }

    /// "signed by K…=" (and how many more), or "unsigned".
    static func signed(by signers: [String]) -> String {
        let more = signers.count > 1 ? " and \(signers.count - 1) more" : ""
        return signers.first.map { "signed by \($0)\(more)" } ?? "unsigned"
    }
}

struct PlanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "List the files a device with this environment would download, with sizes; writes nothing."
    )

    @Argument(help: "A bundle URL, or a bundle folder on disk.", completion: .file()) var source: String
    @Option(name: .customLong("env"), help: ArgumentHelp("Set a condition key.", valueName: "KEY=VALUE"))
    var environment: [String] = []
    @Flag(help: "Print JSON.") var json = false
    @OptionGroup var trust: TrustOptions

    func run() async throws {
        if !["http", "https"].contains(URL(string: source)?.scheme ?? "") {
            try CommandFailure.requireExisting(source)
        }
        let environment = try EnvironmentOptions.apply(self.environment, to: .current())
        let tls = try trust.tlsConfiguration()
        let (files, otherDevices): ([SelectedEntry], Int)
        do {
            if let url = URL(string: source), url.scheme == "http" || url.scheme == "https" {
                (files, otherDevices) = try await PipeliningTransport.withTransport(tlsConfiguration: tls) {
                    transport in
                    try await BundleSync(
                        remote: url,
                        store: BundleStore(root: FileManager.default.temporaryDirectory),
                        environment: environment,
                        transport: transport
                    ).devicePlan()
                }
            } else {
                (files, otherDevices) = try await LocalBundle.devicePlan(
                    folder: URL(fileURLWithPath: source),
                    environment: environment
                )
            }
        } catch { throw CommandFailure(error) }
        if json {
            print(try JSONOutput.encode(files))
            return
        }
        for file in files { print("\(file.size.map { String($0) } ?? "?")\t\(file.path)") }
        let known = files.compactMap(\.size)
        let unknown = files.count - known.count
        print(
            "\(counted(files.count, "file")), \(ByteCount(known.reduce(0, +)))"
                + (unknown > 0 ? " (+\(unknown) of undeclared size)" : "")
                + (otherDevices > 0 ? "; \(otherDevices) for other devices (--env KEY=VALUE plans for another)" : "")
        )
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
