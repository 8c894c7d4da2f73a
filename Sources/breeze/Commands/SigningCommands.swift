import ArgumentParser
import BreezeKit
import Foundation
import FreshAir

struct KeygenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Create an Ed25519 signing key for `breeze sign`; prints the public key apps pin."
    )

    @Argument(help: "Where to write the private key (never overwritten; readable by you only).", completion: .file())
    var keyFile: String
    @Flag(help: "Print JSON: {\"keyFile\", \"publicKey\"}.") var json = false

    func run() async throws {
        let key = SigningKey.generate()
        do { try key.write(to: URL(fileURLWithPath: keyFile)) } catch { throw CommandFailure(error) }
        if json {
            print(try JSONOutput.encode(["keyFile": keyFile, "publicKey": key.publicKey.base64]))
            return
        }
        print("Wrote \(keyFile). Keep it secret.")
        print("Public key (pin it in the app: SyncConfiguration.trustedKeys, or `breeze sync --trusted-key`):")
        print(key.publicKey.base64)
    }
}

struct SignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Sign a bundle, a package or a repository as a new release, so apps that pin your key accept it.",
        discussion: """
            A bundle folder: its root manifest is signed; hash it first (`breeze hash`), since every entry needs a \
            current digest, which the signature then covers. A package file (.tgz, .tar.gz, .tar, .gz, .zip): \
            <package>.sig is written beside it with the package's SHA-256 and size (and, for a .tar of at least \
            --chunk-threshold MB, those of the chunk index written beside it). A repository folder (with \
            index.json): the index is signed, each bundle naming its archive's SHA-256 and size. \
            Each signing is a new release: the sequence moves on \
            (devices refuse anything older or a different document with the same number), "expires" is set (devices \
            refuse it after that date, so old content cannot be replayed for ever) and "identity" names the bundle \
            (devices refuse a manifest signed for another). A legacy array manifest moves to the object form. \
            Repeat --key to sign with several keys; --cosign adds a signature to the release as it stands.
            """
    )

    @Argument(help: "The bundle folder, package file or repository folder.", completion: .file()) var target = "."
    /// `--key FILE` (repeat for several signers), `--key -`, `--key-env NAME` and `--expires`, as `release` takes them.
    @OptionGroup var keys: SigningKeyOptions
    @Option(
        help:
            "What is signed (default: the bundle folder's, package file's or repository folder's name, which apps expect by default)."
    )
    var identity: String?
    @Option(help: "The sequence to sign (default: the next one).") var sequence: Int?
    @Flag(help: "Add this key's signature to the release as it stands: sequence, expiry and identity stay.")
    var cosign = false
    @Option(
        help:
            "A bundle: record this layout in the root manifest before signing (paths, or objects for `breeze publish --layout objects`)."
    )
    var layout: PublishCommand.LayoutName?
    @Option(help: "With --layout objects: the objects' folder relative to the bundle's, such as ../objects.")
    var objects: String?
    @Option(
        help:
            "A .tar package of at least this many MB gets a chunk index (<package>.freshair-chunks) its document names, so devices fetch only changed chunks; 0: none."
    )
    var chunkThreshold = 8
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        var recorded: ContentLayout?
        switch layout {
        case .paths?: recorded = .paths
        case .objects?:
            do {
                recorded = .objects(at: try ContentLayout.checkedLocation(objects ?? ContentLayout.defaultLocation))
            } catch {
                throw ValidationError(error.description)
            }
        case nil: if objects != nil { throw ValidationError("--objects goes with --layout objects.") }
        }
        let signingKeys: [SigningKey]
        do { signingKeys = try keys.signingKeys() } catch let error as ValidationError { throw error } catch {
            throw CommandFailure(error)
        }
        guard !signingKeys.isEmpty else {
            throw ValidationError(
                "Give the key to sign with: --key FILE (from `breeze keygen`), --key - (standard input) or --key-env NAME."
            )
        }
        let report: SigningReport
        do {
            let options = SigningOptions(
                cosign: cosign,
                validity: keys.validity,
                identity: identity,
                sequence: sequence,
                layout: recorded,
                chunkThreshold: chunkThreshold > 0 ? Int64(chunkThreshold) << 20 : nil
            )
            let url = URL(fileURLWithPath: target)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
                throw CommandFailure(CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: url.path]))
            }
            if recorded != nil,
                !FileManager.default.fileExists(atPath: url.appendingPathComponent("manifest.json").path)
            {
                throw ValidationError("--layout applies to bundles; packages and repositories keep their paths.")
            }
            if !isFolder.boolValue {
                report = try PackageSigner.sign(package: url, with: signingKeys, options: options)
            } else if !FileManager.default.fileExists(atPath: url.appendingPathComponent("manifest.json").path),
                FileManager.default.fileExists(atPath: url.appendingPathComponent("index.json").path)
            {
                report = try RepositoryPublisher.sign(repository: url, with: signingKeys, options: options)
            } else {
                report = try await ManifestSigner.sign(bundle: url, with: signingKeys, options: options)
            }
        } catch { throw CommandFailure(error) }
        if json {
            print(try JSONOutput.encode(report))
            return
        }
        if report.convertedToObjectForm {
            print("manifest.json moved to the object form (format 2) to carry signatures.")
        }
        if report.dropped > 0 {
            print("Dropped \(report.dropped) signature\(report.dropped == 1 ? "" : "s") of the earlier release.")
        }
        let release =
            "\(report.identity ?? "?"), sequence \(report.sequence ?? 0), expires \(report.expires?.formatted(.iso8601) ?? "never")"
        let signers = report.keys.joined(separator: ", ")
        let file = report.file.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "manifest.json"
        print(
            "Signed \(file) (\(release)) with \(signers)"
                + (report.kept.isEmpty
                    ? "." : "; kept \(report.kept.count) other signature\(report.kept.count == 1 ? "" : "s").")
                + (report.chunkIndex.map { " It names the chunk index \(URL(fileURLWithPath: $0).lastPathComponent)." }
                    ?? "")
        )
    }
}

struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract:
            "Write key documents: the keys apps trust and how many must sign, rotated by the keys already trusted.",
        discussion: """
            Apps pin version 1 (SyncConfiguration.keyRotation, or `breeze sync --keys 1.json`) and read newer versions \
            from a folder you publish (keys/2.json, keys/3.json, …). A new version must be signed by the threshold of \
            the version before it and by its own threshold: pass enough --key files for both.
            """,
        subcommands: [Create.self, Rotate.self]
    )

    struct Options: ParsableArguments {
        @Option(
            name: .customLong("member"),
            help: "A key of the new document: a public key (base64) or a key file; default: the --key signers."
        )
        var members: [String] = []
        @Option(help: "How many distinct member keys must sign content.") var threshold = 1
        @Option(
            name: .customLong("key"),
            help: "A private key file that signs this document; repeat.",
            completion: .file()
        ) var keys: [String]
        @Flag(help: "Print JSON: {\"output\", \"version\", \"threshold\", \"keys\"}.") var json = false

        func write(previous: KeyDocument?, to output: String) throws {
            let signers = try keys.map { try SigningKey(contentsOf: URL(fileURLWithPath: $0)) }
            let memberKeys =
                members.isEmpty
                ? signers.map(\.publicKey)
                : try members.map { text in
                    if let key = try? TrustedKey(base64: text) { return key }
                    return try SigningKey(contentsOf: URL(fileURLWithPath: text)).publicKey
                }
            let document: KeyDocument
            do {
                document = try KeyDocumentWriter.write(
                    members: memberKeys,
                    threshold: threshold,
                    signers: signers,
                    previous: previous,
                    to: URL(fileURLWithPath: output)
                )
            } catch { throw CommandFailure(error) }
            struct Written: Encodable {
                var output: String
                var version: Int
                var threshold: Int
                var keys: [String]
            }
            if json {
                let written = Written(
                    output: output,
                    version: Int(document.version),
                    threshold: document.keySet.threshold,
                    keys: document.keySet.keys.map(\.base64)
                )
                return print(try JSONOutput.encode(written))
            }
            print(
                "Wrote \(output): version \(document.version), \(document.keySet.threshold) of \(document.keySet.keys.count) keys must sign."
            )
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Write version 1, signed by its own threshold."
        )
        @Argument(help: "Where to write it, e.g. keys/1.json.", completion: .file()) var output: String
        @OptionGroup var options: Options
        func run() async throws {
            do { try options.write(previous: nil, to: output) } catch { throw CommandFailure(error) }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate",
            abstract: "Write the version after PREVIOUS: add, replace or revoke keys."
        )
        @Argument(help: "The current key document.", completion: .file()) var previous: String
        @Argument(help: "Where to write the next version, e.g. keys/2.json.", completion: .file()) var output: String
        @OptionGroup var options: Options
        func run() async throws {
            do {
                let data = try Data(contentsOf: URL(fileURLWithPath: previous))
                let document = try KeyDocument(data: data, source: previous)
                try options.write(previous: document, to: output)
            } catch { throw CommandFailure(error) }
        }
    }
}
