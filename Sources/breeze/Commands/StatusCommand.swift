import ArgumentParser
import BreezeKit
import Foundation
import FreshAir

/// `breeze status`: what devices get from a destination now.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Say what devices get from a destination now: the live release per audience, and its expiry.",
        discussion: """
            DESTINATION is where `breeze release` publishes (a folder or s3://BUCKET/PREFIX). Lists the live \
            release (sequence, signers, files), who gets what while a release is staged (--rollout, --channel), \
            and the days until devices refuse the signature, with a warning under 7 days: renew with \
            `breeze release --renew DESTINATION --key K`. \
            Exit codes: 69 the server refused; 75 the network failed; 78 nothing breeze released is there, \
            or credentials, endpoint or options are wrong.
            """
    )

    @Argument(help: "A folder, or s3://BUCKET/PREFIX.", completion: .file()) var destination: String
    @OptionGroup var s3: S3DestinationOptions
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        try CommandFailure.requireExistingDestination(destination)
        let status: ReleaseHistory.Status
        do {
            status = try await s3.with(destination) { try await ReleaseHistory.status(at: $0, now: Date()) }
        } catch { throw CommandFailure(error) }
        for warning in status.warnings {
            TerminalText.writeError("breeze: warning: \(warning)")
        }
        if json { return print(try JSONOutput.encode(status)) }
        print(TerminalText.escaped(Self.summary(status)))
    }

    static func summary(_ status: ReleaseHistory.Status) -> String {
        let live = status.live
        let sequence = live.sequence.map { "sequence \($0)" } ?? "an unsigned release"
        var lines = [
            "\(status.destination): \(sequence), \(live.files) \(status.root == "index.json" ? "bundle" : "file")"
                + "\(live.files == 1 ? "" : "s") "
                + "(\(ByteCount(live.bytes)))" + (status.layout.map { ", \($0) layout" } ?? "")
                + (live.published.map { ", published \(ISO8601Timestamp.format($0))" } ?? "") + "."
        ]
        lines.append(
            live.signers.isEmpty
                ? "Not signed: devices that pin a key refuse it."
                : "Signed by \(live.signers.joined(separator: ", "))."
        )
        for audience in status.audiences {
            // Without a sequence (unsigned): the live release, or for the others the one before it.
            let unnumbered =
                audience.sequence == nil && audience.who == "everyone" ? "this release" : "the release before it"
            let what = audience.sequence.map { "sequence \($0)" } ?? unnumbered
            let one = audience.who.hasPrefix("every")
            lines.append(
                "\(audience.who.prefix(1).uppercased() + audience.who.dropFirst()) \(one ? "gets" : "get") \(what)."
            )
        }
        if let expires = live.expires, let days = status.daysUntilExpiry {
            lines.append(
                days < 0
                    ? "The signature expired \(ISO8601Timestamp.format(expires))."
                    : "The signature expires \(ISO8601Timestamp.format(expires)), in \(days) day\(days == 1 ? "" : "s")."
            )
        }
        return lines.joined(separator: "\n")
    }
}
