import ArgumentParser
import BreezeKit
import Foundation
import FreshAir

struct ReleaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "release",
        abstract: "From an edited folder to published content in one step: generate, hash, sign, validate, publish.",
        discussion: """
            SOURCE is a bundle folder, a package file or a repository folder; DESTINATION a served folder or \
            s3://BUCKET/PREFIX, as for `breeze publish`. A bundle's manifest is generated from the folder \
            (`breeze generate`), then signed with --key as a new release when anything changed, when the key \
            has not signed it, or when its signature expires within a week; otherwise its signatures are kept \
            and nothing moves on devices. The result is validated, and checked as a device pinning the key \
            checks it, before anything is uploaded: an error stops the release with nothing published. \
            A package or repository is signed (with --key) and published. \
            The key comes from --key FILE, --key - (standard input) or --key-env NAME (an environment \
            variable holding the key file's text, as CI secrets are). \
            --dry-run changes nothing, the source included: it lists what would be uploaded. \
            Exit codes: 65 the source is not fit to publish (validation errors, a signature a device would refuse); \
            66 SOURCE does not exist; 69 the server refused; 75 the network failed (release again); \
            78 credentials, endpoint or options are wrong.
            """
    )

    @Argument(help: "The bundle folder, package file or repository folder.") var source: String
    @Argument(help: "A folder, or s3://BUCKET/PREFIX.") var destination: String
    @Option(name: .customLong("key"), help: "A private key file from `breeze keygen`, or - for standard input.")
    var keyFiles: [String] = []
    @Option(help: "The name of an environment variable holding a private key file's text.") var keyEnv: String?
    @Option(help: "Days until devices refuse a newly signed release.") var expires = 30
    @Flag(help: "Say what would be signed and uploaded; change nothing, the source included.") var dryRun = false
    @Option(help: "A bundle's layout: paths or objects (see `breeze publish --help`).")
    var layout: PublishCommand.LayoutName?
    @Option(help: "An S3-compatible server's URL (MinIO, Ceph, R2).") var endpoint: String?
    @Option(help: "The bucket's region.") var region: String?
    @Option(
        help: "The AWS profile whose credentials, region and endpoint_url to use (default: AWS_PROFILE, else default)."
    )
    var profile: String?
    @Option(help: "S3: a canned ACL for every object, such as public-read.") var acl: String?
    @Option(help: "S3: seconds to wait for an answer before a request is tried again.") var timeout = 60
    @Option(help: "Uploads at once.") var concurrency = 8
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        guard expires > 0 else { throw ValidationError("--expires takes a number of days above 0.") }
        guard timeout >= 1 else { throw ValidationError("--timeout takes a number of seconds, at least 1.") }
        if keyFiles.filter({ $0 == "-" }).count > 1 { throw ValidationError("--key - can be given once.") }
    }

    /// The signing keys, from files, standard input and the environment.
    func signingKeys() throws -> [SigningKey] {
        var keys = try keyFiles.map { path in
            try SigningKey(contentsOf: URL(fileURLWithPath: path == "-" ? "/dev/stdin" : path))
        }
        if let keyEnv {
            guard let text = ProcessInfo.processInfo.environment[keyEnv], !text.isEmpty else {
                throw ValidationError("--key-env \(keyEnv): no such environment variable, or it is empty.")
            }
            keys.append(try SigningKey(text: text, origin: "the environment variable \(keyEnv)"))
        }
        return keys
    }

    func run() async throws {
        try CommandFailure.requireExisting(source)
        let options = S3Options.command(acl: acl, timeout: timeout)
        let report: ReleasePipeline.Report
        let target: String
        let line = ProgressLine(enabled: !json && !dryRun && ProgressLine.isTerminal)
        defer { line.clear() }
        do {
            let keys = try signingKeys()
            (report, target) = try await PublishDestinations.with(
                destination,
                endpoint: endpoint,
                region: region,
                profile: profile,
                options: options
            ) { target in
                let report = try await ReleasePipeline.run(
                    source: URL(fileURLWithPath: source),
                    to: target,
                    keys: keys,
                    validity: .seconds(expires * 86_400),
                    layout: layout.map { $0 == .objects ? .objects(at: ContentLayout.defaultLocation) : .paths },
                    dryRun: dryRun,
                    concurrency: concurrency,
                    progress: { line.show($0) }
                )
                return (report, target.description)
            }
        } catch let error as ValidationError {
            throw error
        } catch { throw CommandFailure(error) }
        line.clear()
        if json {
            print(try JSONOutput.encode(report))
            return
        }
        print(Self.summary(of: report, target: target, now: Date()))
    }

    /// What a person reads after a release: what changed, the release devices will see, and
    /// when its signature runs out.
    static func summary(of report: ReleasePipeline.Report, target: String, now: Date) -> String {
        var lines: [String] = []
        let would = report.dryRun ? "would be " : ""
        for path in report.added { lines.append("\(would)added: \(path)") }
        for path in report.removed { lines.append("\(would)removed: \(path)") }
        lines += report.warnings
        for path in report.published.uploaded {
            lines.append("\(report.dryRun ? "would upload" : "uploaded"): \(path)")
        }
        if report.signaturesKept {
            lines.append(
                "Nothing changed since it was signed: its signatures are kept, and devices see no new release."
            )
        } else if let signed = report.signed {
            lines.append(
                "\(report.dryRun ? "Would sign" : "Signed") sequence \(signed.sequence ?? 0) with \(signed.keys.joined(separator: ", "))."
            )
        } else if report.kind != "bundle" || report.sequence == nil {
            lines.append("Not signed: devices that pin a key will refuse it (give --key).")
        }
        if let expires = report.expires {
            let days = Int((expires.timeIntervalSince(now) / 86_400).rounded(.down))
            lines.append(
                "The signature expires \(expires.formatted(.iso8601)), in \(days) day\(days == 1 ? "" : "s"): "
                    + "release again before then, or devices refuse it."
            )
        }
        let published = report.published
        lines.append(
            "\(report.dryRun ? "Dry run for" : "Released to") \(target): \(published.uploaded.count) "
                + "\(report.dryRun ? "to upload" : "uploaded") (\(ByteCount(published.bytesUploaded))), \(published.unchanged) unchanged."
        )
        return lines.joined(separator: "\n")
    }
}
