import ArgumentParser
import BreezeKit
import Foundation
import FreshAir

struct KeygenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Create an Ed25519 signing key for `breeze sign`; prints the public key apps pin.")

    @Argument(help: "Where to write the private key (never overwritten; readable by you only).") var keyFile: String
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
        abstract: "Sign a bundle's root manifest as a new release, so apps that pin your key accept it.",
        discussion: """
            The bundle must be hashed first (`breeze hash`): every entry needs a current digest, which the \
            signature then covers through the root manifest. Each signing is a new release: the sequence moves on \
            (devices refuse anything older or a different document with the same number), "expires" is set (devices \
            refuse it after that date, so old content cannot be replayed for ever) and "identity" names the bundle \
            (devices refuse a manifest signed for another). A legacy array manifest moves to the object form. \
            Repeat --key to sign with several keys; --cosign adds a signature to the release as it stands.
            """)

    @Argument(help: "The bundle folder.") var bundle = "."
    @Option(name: .customLong("key"), help: "A private key file from `breeze keygen`; repeat for several signers.") var keys: [String]
    @Option(help: "Days until devices refuse this manifest.") var expires = 30
    @Option(help: "What the manifest is signed for (default: the bundle folder's name, which apps expect by default).") var identity: String?
    @Option(help: "The sequence to sign (default: the next one).") var sequence: Int?
    @Flag(help: "Add this key's signature to the release as it stands: sequence, expiry and identity stay.") var cosign = false
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        guard expires > 0 else { throw ValidationError("--expires takes a number of days above 0.") }
        let report: ManifestSigner.Report
        do {
            let signingKeys = try keys.map { try SigningKey(contentsOf: URL(fileURLWithPath: $0)) }
            let options = ManifestSigner.Options(cosign: cosign, validity: .seconds(expires * 86_400), identity: identity, sequence: sequence)
            report = try await ManifestSigner.sign(bundle: URL(fileURLWithPath: bundle), with: signingKeys, options: options)
        } catch { throw CommandFailure(error) }
        if json {
            print(try JSONOutput.encode(report))
            return
        }
        if report.convertedToObjectForm { print("manifest.json moved to the object form (format 2) to carry signatures.") }
        if report.dropped > 0 { print("Dropped \(report.dropped) signature\(report.dropped == 1 ? "" : "s") of the earlier release.") }
        let release = "\(report.identity ?? "?"), sequence \(report.sequence ?? 0), expires \(report.expires?.formatted(.iso8601) ?? "never")"
        let signers = report.keys.joined(separator: ", ")
        print("Signed manifest.json (\(release)) with \(signers)" + (report.kept.isEmpty ? "." : "; kept \(report.kept.count) other signature\(report.kept.count == 1 ? "" : "s")."))
    }
}
