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
            --rollout PERCENT and --channel NAME stage a bundle's release (object layout): installs whose \
            rollout bucket is below PERCENT, or whose app sets the channel NAME, get it; every other device \
            keeps the release published now. Release again with another --rollout to widen it, without \
            either to promote it to everyone, or stop it with `breeze revert DESTINATION`; a release for another \
            audience than the running one is refused unless --replace-rollout. \
            --renew DESTINATION signs the live bundle release again, unchanged, with a new expiry at the next \
            sequence (for a scheduled job: devices refuse a release once its signature expires). \
            A release is a transaction: it reads what is live first, signs above it, uploads, and replaces the \
            root only if it is still the one it read, so of two releases run at once one wins and the other \
            exits 75 having changed nothing devices read (in the object layout; in the path layout its content \
            files were already overwritten). A release is refused when it would lower the live sequence, and when \
            it removes every file devices have, more than half of them, or more than 256 MiB (--allow-removals). \
            The source's manifest.json changes only when the release succeeded. \
            Exit codes: 65 the source is not fit to publish (validation errors, a signature a device would refuse, \
            an older release, removals without --allow-removals); \
            66 SOURCE does not exist; 69 the server refused, or what is published there is not \
            signed by the key (a staged release signs it again); 75 the network failed, or another release got \
            there first (release again: it signs above it); 78 credentials, endpoint or options are wrong.
            """
    )

    @Argument(
        help: "The bundle folder, package file or repository folder (with --renew: the destination).",
        completion: .file()
    )
    var source: String
    @Argument(
        help: "A folder, or s3://BUCKET/PREFIX; for a package, the folder it goes into, or its own path there.",
        completion: .file()
    )
    var destination: String?
    @Flag(
        help: ArgumentHelp(
            "Sign the live bundle release again, unchanged, with a new expiry: `breeze release --renew DESTINATION --key K`.",
            discussion:
                "For a scheduled job: devices refuse a release once its signature expires (--expires days after signing)."
        )
    )
    var renew = false
    @OptionGroup var keys: SigningKeyOptions
    @Flag(help: "Say what would be signed and uploaded; change nothing, the source included.") var dryRun = false
    @Flag(help: RemovalFlag.help) var allowRemovals = false
    @Option(
        help:
            "A bundle's layout: paths or objects (see `breeze publish --help`). Default: objects on a new destination, else what is published there."
    )
    var layout: PublishCommand.LayoutName?
    @Option(help: "Stage a bundle's release: only installs whose rollout bucket (0-99) is below this get it.")
    var rollout: Int?
    @Option(help: "Stage a bundle's release: only apps that set this channel get it.") var channel: String?
    @Flag(help: "Replace a staged release running for another channel (or for all channels) with this one.")
    var replaceRollout = false
    @Flag(help: SigningKeyOptions.switchKeysHelp) var switchKeys = false
    @OptionGroup var s3: S3DestinationOptions
    @Flag(help: "S3: make the bucket first if it does not exist (a new Ceph, MinIO or R2 server has none).")
    var createBucket = false
    @OptionGroup var cache: CacheOptions
    @Option(help: "Uploads at once.") var concurrency = 8
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        try CheckedNumber.require(concurrency, in: CheckedNumber.concurrency, "--concurrency", "uploads")
        if let rollout { try CheckedNumber.require(rollout, in: 1...100, "--rollout", "percent") }
        if renew {
            guard destination == nil else {
                throw ValidationError(
                    "--renew takes the destination alone: `breeze release --renew DESTINATION --key K`."
                )
            }
            guard rollout == nil, channel == nil, layout == nil, !replaceRollout else {
                throw ValidationError(
                    "--renew signs the live release as it is: it takes no --rollout, --channel or --layout."
                )
            }
        } else if destination == nil {
            throw ValidationError("Missing expected argument '<destination>': `breeze release SOURCE DESTINATION`.")
        }
    }

    func run() async throws {
        guard let destination, !renew else { return try await renewLive(at: source) }
        try CommandFailure.requireExisting(source)
        let report: ReleasePipeline.Report
        let target: String
        let line = ProgressLine(enabled: !json && !dryRun && ProgressLine.isTerminal)
        defer { line.clear() }
        do {
            let signingKeys = try keys.signingKeys()
            let gate =
                rollout == nil && channel == nil ? nil : try StagedRelease.Gate(percent: rollout, channel: channel)
            var options = s3.options
            options.cachePolicy = cache.policy
            options.createsBucket = createBucket && !dryRun
            (report, target) = try await s3.with(
                PublishDestinations.folder(for: destination, publishing: URL(fileURLWithPath: source)),
                options: options
            ) { target in
                let report = try await ReleasePipeline.run(
                    source: URL(fileURLWithPath: source),
                    to: target,
                    keys: signingKeys,
                    validity: keys.validity,
                    layout: layout.map { $0 == .objects ? .objects(at: ContentLayout.defaultLocation) : .paths },
                    staged: gate,
                    replacingRollout: replaceRollout,
                    dryRun: dryRun,
                    concurrency: concurrency,
                    switchingKeys: switchKeys,
                    removals: RemovalCheck(allowsAny: allowRemovals),
                    progress: { line.show($0) }
                )
                return (report, target.description)
            }
        } catch let error as ValidationError {
            throw error
        } catch let error as PublishError where error.kind == .conflict {
            throw CommandFailure(
                error,
                hint: "run the same `breeze release` again: it signs above the release now live."
            )
        } catch let error as PublishError {
            throw CommandFailure(error, hint: FollowUp.hint(for: error, destination: destination, keys: keys, s3: s3))
        } catch { throw CommandFailure(error) }
        line.clear()
        if json {
            print(try JSONOutput.encode(report))
            return
        }
        let followUps = (FollowUp.revert(target, keys: keys, s3: s3), FollowUp.renew(target, keys: keys, s3: s3))
        print(Self.summary(of: report, target: target, now: Date(), followUps: followUps))
    }

    /// `--renew`: the live release signed again, unchanged, with a new expiry.
    private func renewLive(at destination: String) async throws {
        try CommandFailure.requireExistingDestination(destination)
        let report: PublisherRollback.Report
        do {
            let signingKeys = try keys.signingKeys()
            report = try await s3.with(destination) { target in
                try await PublisherRollback.renew(
                    at: target,
                    keys: signingKeys,
                    validity: keys.validity,
                    dryRun: dryRun
                )
            }
        } catch let error as ValidationError {
            throw error
        } catch let error as PublishError where error.kind == .conflict {
            throw CommandFailure(
                error,
                hint: "run the same `breeze release --renew` again: it signs above the release now live."
            )
        } catch { throw CommandFailure(error) }
        if json { return print(try JSONOutput.encode(report)) }
        let old = report.restoredSequence.map { "sequence \($0)" } ?? "the live release"
        print(
            "\(report.dryRun ? "Would renew" : "Renewed") \(old) at \(destination) as sequence "
                + "\(report.sequence.map(String.init) ?? "(none)"): the same content, \(ByteCount(report.bytesUploaded)) uploaded."
        )
        if let expires = report.expires {
            print("The signature expires \(expires.formatted(.iso8601)): renew again before then.")
        }
    }

    /// What a person reads after a release: what changed, the release devices will see, and
    /// when its signature runs out.
    static func summary(
        of report: ReleasePipeline.Report,
        target: String,
        now: Date,
        followUps: (revert: FollowUp, renew: FollowUp)
    ) -> String {
        var lines: [String] = []
        let would = report.dryRun ? "would be " : ""
        for path in report.added { lines.append("\(would)added: \(path)") }
        for path in report.removed { lines.append("\(would)removed: \(path)") }
        lines += report.warnings.map(\.description)
        for path in report.published.uploaded {
            lines.append("\(report.dryRun ? "would upload" : "uploaded"): \(path)")
        }
        lines += RemovalFlag.lines(report.published.removedFromLive, dryRun: report.dryRun)
        if report.published.first {
            lines.append(
                "The first release there: devices \(report.dryRun ? "would get" : "get") it at their next check."
            )
        }
        if report.signaturesKept, !report.published.first {
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
        if report.kind == "bundle", report.published.layout == "paths" {
            lines.append(
                "\(target) uses the path layout, where files keep their names: a release interrupted or lost to "
                    + "another midway has overwritten some of them, and devices refuse those until the next release. "
                    + "`--layout objects` moves it to the object layout in one release (devices download nothing again)."
            )
        }
        if let gate = report.staged {
            lines.append(
                "Staged: \(gate.description) \(report.dryRun ? "would get" : "get") this release; every other device "
                    + "keeps the one published before. Widen it with another --rollout, promote it to everyone by "
                    + "releasing without --rollout and --channel, or stop it with `\(followUps.revert.text)`."
            )
        }
        if let expires = report.expires {
            let days = Int((expires.timeIntervalSince(now) / 86_400).rounded(.down))
            lines.append(
                "The signature expires \(expires.formatted(.iso8601)), in \(days) day\(days == 1 ? "" : "s"): "
                    + "release again before then, or devices refuse it"
                    + (report.kind == "bundle" ? " (`\(followUps.renew.text)` renews it as it is)." : ".")
            )
        }
        let published = report.published
        if published.accessGranted > 0 { lines.append(PublishCommand.accessLine(published.accessGranted)) }
        lines.append(
            "\(report.dryRun ? "Dry run for" : "Released to") \(target): \(published.uploaded.count) "
                + "\(report.dryRun ? "to upload" : "uploaded") (\(ByteCount(published.bytesUploaded))), \(published.unchanged) unchanged."
        )
        return lines.joined(separator: "\n")
    }
}
