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
        abstract: "Sign a bundle's root manifest, so apps that pin your key accept it.",
        discussion: """
            The bundle must be hashed first (`breeze hash`): every entry needs a current digest, which the \
            signature then covers through the root manifest. A legacy array manifest moves to the object form \
            {"format": 2, "sequence": 1, "files": […]}; other keys' signatures that still match are kept. \
            Run it again after every change: `breeze hash` removes signatures that no longer match.
            """)

    @Argument(help: "The bundle folder.") var bundle = "."
    @Option(help: "The private key file from `breeze keygen`.") var key: String
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let report: ManifestSigner.Report
        do {
            let signingKey = try SigningKey(contentsOf: URL(fileURLWithPath: key))
            report = try await ManifestSigner.sign(bundle: URL(fileURLWithPath: bundle), with: signingKey)
        } catch { throw CommandFailure(error) }
        if json {
            print(try JSONOutput.encode(report))
            return
        }
        if report.convertedToObjectForm { print("manifest.json moved to the object form (format 2, sequence 1) to carry signatures.") }
        if report.dropped > 0 { print("Dropped \(report.dropped) signature\(report.dropped == 1 ? "" : "s") that no longer matched.") }
        print("Signed manifest.json with \(report.key)" + (report.kept.isEmpty ? "." : "; kept \(report.kept.count) other signature\(report.kept.count == 1 ? "" : "s")."))
    }
}
