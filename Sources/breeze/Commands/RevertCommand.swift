import ArgumentParser
import BreezeKit
import Foundation
import FreshAir

/// `breeze revert`: the publisher's rollback.
struct RevertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revert",
        abstract: "Publish an earlier release again, as the next release; or stop a staged release.",
        discussion: """
            DESTINATION is where `breeze release` published a bundle in the object layout (a folder or \
            s3://BUCKET/PREFIX). The release before the current one (or the one --to names, by sequence) is \
            signed again under the next sequence, so devices that pin the key take it, and only the new \
            manifest.json is uploaded: every file is in the object store already. A second revert steps further \
            back, to the release before the one the first restored (`breeze history` lists them). A staged release \
            (--rollout, --channel) is stopped: the release before it, to everyone. In the path layout each \
            release overwrote the one before: release that version's folder again instead. \
            Exit codes: 65 an object is gone from the store, or nothing to go back to; 69 the server refused, or the release to sign again is not signed by the key; \
            75 the network failed; 78 the path layout, a missing key, credentials or options.
            """
    )

    @Argument(help: "A folder, or s3://BUCKET/PREFIX.", completion: .file()) var destination: String
    @Option(help: "The sequence of the release to publish again (default: the one before the current).")
    var to: Int?
    @OptionGroup var keys: SigningKeyOptions
    @Flag(help: "Say what would be published; change nothing.") var dryRun = false
    @OptionGroup var s3: S3DestinationOptions
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        try CommandFailure.requireExistingDestination(destination)
        let report: PublisherRollback.Report
        do {
            let signingKeys = try keys.signingKeys()
            report = try await s3.with(destination) { target in
                try await PublisherRollback.run(
                    at: target,
                    to: to,
                    keys: signingKeys,
                    validity: keys.validity,
                    dryRun: dryRun
                )
            }
        } catch let error as ValidationError {
            throw error
        } catch { throw CommandFailure(error) }
        if json { return print(try JSONOutput.encode(report)) }
        let would = report.dryRun ? "Would publish" : "Published"
        let what =
            report.stoppedStagedRelease
            ? "the release before the staged one, to everyone"
            : "the content of sequence \(report.restoredSequence.map(String.init) ?? "(unsigned)")"
        var line = "\(would) \(what) as sequence \(report.sequence.map(String.init) ?? "(none)") to \(destination)"
        line += " (\(ByteCount(report.bytesUploaded)): manifest.json only)."
        print(line)
        if let expires = report.expires {
            print(
                "The signature expires \(expires.formatted(.iso8601)): release again before then, or devices refuse it."
            )
        }
    }
}
