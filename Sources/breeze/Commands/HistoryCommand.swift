import ArgumentParser
import BreezeKit
import Foundation
import FreshAir

/// `breeze history`: every release a destination has published, newest first.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List the releases published to a destination: sequence, time, signers, files, audience, expiry.",
        discussion: """
            DESTINATION is where `breeze release` publishes (a folder or s3://BUCKET/PREFIX). In the object \
            layout every release stays in the store and the destination's publish history names them, so any \
            machine with access lists the same; `breeze revert --to SEQUENCE` publishes one again. The path \
            layout keeps no history: only the live release is listed. \
            Exit codes: 69 the server refused; 75 the network failed; 78 nothing breeze released is there, \
            or credentials, endpoint or options are wrong.
            """
    )

    @Argument(help: "A folder, or s3://BUCKET/PREFIX.", completion: .file()) var destination: String
    @OptionGroup var s3: S3DestinationOptions
    @Flag(help: "Print JSON: an array of releases, newest first.") var json = false

    func run() async throws {
        try CommandFailure.requireExistingDestination(destination)
        let releases: [ReleaseHistory.Release]
        do {
            releases = try await s3.with(destination) { try await ReleaseHistory.list(at: $0) }
        } catch { throw CommandFailure(error) }
        if json { return print(try JSONOutput.encode(releases)) }
        print(TerminalText.escaped(Self.table(releases)))
    }

    /// One line per release, newest first, the live one marked.
    static func table(_ releases: [ReleaseHistory.Release]) -> String {
        var lines = ["  SEQUENCE  PUBLISHED             FILES  BYTES      EXPIRES               SIGNED BY    NOTE"]
        for release in releases {
            let sequence = release.sequence.map(String.init) ?? "-"
            let published = release.published.map(ISO8601Timestamp.format) ?? "-"
            let expires = release.expires.map(ISO8601Timestamp.format) ?? "-"
            let signers =
                release.signers.isEmpty
                ? "unsigned"
                : release.signers.map { String($0.prefix(8)) + "…" }
                    .joined(separator: ",")
            var notes: [String] = []
            if let gate = release.staged { notes.append("staged: \(gate.description)") }
            if let restores = release.restores { notes.append("the content of sequence \(restores)") }
            lines.append(
                (release.live ? "* " : "  ") + sequence.padded(8) + "  " + published.padded(20) + "  "
                    + String(release.files).padded(5) + "  " + ByteCount(release.bytes).description.padded(9) + "  "
                    + expires.padded(20) + "  " + signers.padded(11) + "  " + notes.joined(separator: "; ")
            )
        }
        lines.append("* live: what devices get now (see `breeze status`).")
        return lines.map { $0.replacingOccurrences(of: " +$", with: "", options: .regularExpression) }
            .joined(separator: "\n")
    }
}

extension String {
    /// The string followed by spaces up to `width` characters.
    func padded(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
