import ArgumentParser
import BreezeKit
import Foundation
import FreshAir

struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract:
            "Upload a bundle, package or repository folder to S3 or a served folder: only what changed, the root manifest last.",
        discussion: """
            DESTINATION is a folder (what nginx or any web server serves) or s3://BUCKET/PREFIX. \
            S3 credentials come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, else \
            from the AWS profile (--profile, AWS_PROFILE, else default) in ~/.aws/credentials and ~/.aws/config \
            (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE), as the AWS CLI reads them; \
            the region from --region, AWS_REGION, AWS_DEFAULT_REGION or the profile (default us-east-1); an \
            S3-compatible server from --endpoint, AWS_ENDPOINT_URL or the profile's endpoint_url (path-style addressing). \
            A bundle is published only when its digests are current and its signatures match. \
            Content goes up first, then manifest.json and index.json files, deepest first, the root one last, \
            so a device never reads a manifest naming a file that is not there yet. In a folder, files are \
            renamed into place and an overwritten file's modification time moves forward, so servers' \
            ETag and Last-Modified change with it. Hidden files are not published. \
            On S3 every object gets a Content-Type and a Cache-Control (short for manifests and \
            signatures, which caches must revalidate); a file larger than --part-size goes up as a \
            multipart upload, its parts in parallel, and a publish that was killed is resumed by the \
            next. Requests S3 throttles (503 SlowDown) or fails are retried with back-off. \
            With --layout objects (the default for a bundle on a new destination, unless its root is signed for the path \
            layout; or when the root manifest or the release published there records it) a bundle goes up as objects/<sha256>, \
            one object per distinct file, which never changes and is cached for a year; only manifest.json is \
            overwritten, last. Objects already there, from any version or bundle, are not sent again. \
            --gc --keep N then removes objects that none of the last N versions of any bundle sharing the store \
            needs (objects younger than --gc-grace-minutes stay). \
            The root goes up only if it is still the one this publish read first (S3: If-Match; a folder: a lock), \
            and only if it comes after it: a lower sequence than the live one, or the same sequence with \
            other content, is refused (`breeze revert` goes back). A root that stops listing every file, more \
            than half of them or more than 256 MiB of what devices have needs --allow-removals. \
            Exit codes: 65 the source is not fit to publish, or would take devices back, or another release \
            got there first; 69 the server refused or failed; \
            75 the network failed (publish again); 78 credentials, endpoint or options are wrong.
            """
    )

    @Argument(help: "The bundle folder, package file or repository folder.", completion: .file()) var source: String
    @Argument(
        help: "A folder, or s3://BUCKET/PREFIX; for a package, the folder it goes into, or its own path there.",
        completion: .file()
    )
    var destination: String
    @OptionGroup var s3: S3DestinationOptions
    @Flag(help: "S3: make the bucket first if it does not exist (a new Ceph, MinIO or R2 server has none).")
    var createBucket = false
    @Flag(
        help:
            "After the root manifest is in place, remove files the source no longer has. Devices that read the old manifest a moment before may then fail that one sync and retry."
    ) var delete = false
    @Flag(help: "Say what would be uploaded and removed; change nothing.") var dryRun = false
    @Flag(help: RemovalFlag.help) var allowRemovals = false
    @Flag(help: SigningKeyOptions.switchKeysHelp) var switchKeys = false
    @Option(
        help:
            "A bundle's layout: paths (as served so far) or objects (objects/<sha256>, cacheable for ever). Default: objects on a new destination (unless the root is signed for paths), else what is published there."
    )
    var layout: LayoutName?
    @Option(
        help:
            "With --layout objects: the objects' folder, relative to DESTINATION, such as ../objects to share one store between bundles."
    )
    var objects: String?
    @Flag(
        help:
            "With the object layout: remove objects the last --keep versions of every bundle in the store do not need."
    )
    var gc = false
    @Option(help: "Versions whose objects --gc keeps, per bundle.") var keep = 3
    @Option(
        help: "Objects younger than this many minutes are never removed by --gc (another publish may be under way)."
    )
    var gcGraceMinutes = 60
    @Option(help: "Uploads at once.") var concurrency = 8
    @Option(help: "S3: files larger than this many MiB go up in parts of this size (at least 5).")
    var partSize: Int64 = 8
    @OptionGroup var cache: CacheOptions
    @Flag(help: "Print JSON.") var json = false

    enum LayoutName: String, ExpressibleByArgument, CaseIterable {
        case paths, objects
    }

    func validate() throws {
        if objects != nil, layout == .paths { throw ValidationError("--objects applies to --layout objects.") }
        if let objects {
            do { _ = try ContentLayout.checkedLocation(objects) } catch { throw ValidationError(error.description) }
        }
        try CheckedNumber.require(keep, in: 1...1_000, "--keep", "versions")
        try CheckedNumber.require(gcGraceMinutes, in: CheckedNumber.graceMinutes, "--gc-grace-minutes", "minutes")
        try CheckedNumber.require(concurrency, in: CheckedNumber.concurrency, "--concurrency", "uploads")
        try CheckedNumber.require(partSize, in: CheckedNumber.partMiB, "--part-size", "MiB")
    }

    /// What `--layout` and `--objects` ask for; `nil`: what the root manifest records.
    var requestedLayout: ContentLayout? {
        get throws {
            switch layout {
            case .paths?: return .paths
            case .objects?: return .objects(at: try objects.map(ContentLayout.checkedLocation) ?? "")
            case nil: return try objects.map { .objects(at: try ContentLayout.checkedLocation($0)) }
            }
        }
    }

    func run() async throws {
        try CommandFailure.requireExisting(source)
        var options = s3.options
        options.partSize = partSize << 20
        options.partConcurrency = max(1, concurrency / 2)
        options.cachePolicy = cache.policy
        options.createsBucket = createBucket && !dryRun
        let report: Publisher.Report
        let target: String
        let line = ProgressLine(enabled: !json && !dryRun && ProgressLine.isTerminal)
        defer { line.clear() }
        do {
            (report, target) = try await s3.with(
                PublishDestinations.folder(for: destination, publishing: URL(fileURLWithPath: source)),
                options: options
            ) { target in
                let report = try await Publisher.run(
                    source: URL(fileURLWithPath: source),
                    to: target,
                    layout: try requestedLayout,
                    collect: gc ? ObjectCollector(keep: keep, grace: .seconds(gcGraceMinutes * 60)) : nil,
                    delete: delete,
                    dryRun: dryRun,
                    concurrency: concurrency,
                    switchingKeys: switchKeys,
                    removals: RemovalCheck(allowsAny: allowRemovals),
                    objectsWhenNew: true,
                    progress: { line.show($0) }
                )
                return (report, target.description)
            }
        } catch let error as PublishError where error.kind == .conflict {
            // A signed document cannot be signed again here: running publish again cannot help.
            throw CommandFailure(
                PublishError(
                    "\(error.description). What this publishes is signed as it is, so it cannot go above the "
                        + "other: `breeze release` signs it as the next release",
                    kind: .source
                )
            )
        } catch let error as PublishError {
            throw CommandFailure(error, hint: FollowUp.hint(for: error, destination: destination, keys: nil, s3: s3))
        } catch { throw CommandFailure(error) }
        line.clear()
        // On standard error, with --json too: standard output stays the report.
        for warning in report.warnings { TerminalText.writeError("breeze: warning: \(warning)") }
        if json {
            print(try JSONOutput.encode(report))
            return
        }
        let verb = dryRun ? "would upload" : "uploaded"
        for path in report.uploaded { print("\(verb): \(path)") }
        for line in RemovalFlag.lines(report.removedFromLive, dryRun: dryRun) { print(line) }
        for path in report.deleted { print("\(dryRun ? "would remove" : "removed"): \(path)") }
        if gc {
            print("\(dryRun ? "Would collect" : "Collected") \(report.collected.count) objects no kept version needs.")
        }
        if report.accessGranted > 0 { print(PublishCommand.accessLine(report.accessGranted)) }
        print(
            "\(dryRun ? "Dry run for" : "Published to") \(target): \(report.uploaded.count) \(verb) (\(ByteCount(report.bytesUploaded))), "
                + "\(report.unchanged) unchanged, \(report.deleted.count) \(dryRun ? "to remove" : "removed")."
        )
    }
}

extension PublishCommand {
    /// The line that says unchanged S3 objects were given the public ACL uploads get (only a
    /// `public-read` ACL is given to them: see `S3Destination.grantAccess(to:)`).
    static func accessLine(_ count: Int) -> String {
        "\(count) unchanged object\(count == 1 ? "" : "s") had no public-read access, which devices need: given it."
    }
}

/// `--allow-removals`, of `publish` and `release`, and the lines that say what a release removes.
enum RemovalFlag {
    static let help = ArgumentHelp(
        "Allow a release that removes every file devices have, more than half of them, or more than 256 MiB."
    )

    /// "removed for devices: PATH", one per file the new root no longer lists.
    static func lines(_ removed: RemovalCheck.Removed, dryRun: Bool) -> [String] {
        removed.paths.map { "\(dryRun ? "would remove for devices" : "removed for devices"): \($0)" }
    }
}
