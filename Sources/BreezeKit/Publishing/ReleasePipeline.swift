package import Foundation
package import FreshAir

/// `breeze release`: from an edited folder to published content in one step. A bundle is
/// generated (manifest and digests), signed when keys are given and anything changed, validated,
/// checked as a device pinning those keys would check it, and published; a package or a
/// repository is signed and published.
///
/// Nothing is published that a pinning device would refuse, and a dry run changes nothing, not
/// even the source: it works on a linked copy and asks the destination what it would upload.
package enum ReleasePipeline {
    /// What a release did (or, in a dry run, would do).
    package struct Report: Sendable, Codable {
        /// `bundle`, `package` or `repository`.
        package var kind: String
        /// Files `generate` added to or removed from the manifests, and digests it updated.
        package var added: [String] = []
        package var removed: [String] = []
        package var digestsUpdated = 0
        /// The signing this release did; `nil` when nothing was signed.
        package var signed: SigningReport?
        /// The source's signatures were kept: nothing had changed since they were made.
        package var signaturesKept = false
        /// The release as devices will see it.
        package var sequence: Int?
        package var expires: Date?
        /// Warnings from validation (errors stop the release), as `breeze validate` lists them.
        package var warnings: [BundleValidator.Problem] = []
        package var published = Publisher.Report()
        package var dryRun = false
        /// Who a staged release reaches; `nil` for everyone.
        package var staged: StagedRelease.Gate?
    }

    /// A signature expiring sooner than this is renewed even when nothing changed.
    package static let renewalWindow: TimeInterval = 7 * 86_400

    package static func run(
        source: URL,
        to destination: any PublishDestination,
        keys: [SigningKey],
        validity: Duration = .seconds(30 * 86_400),
        layout: ContentLayout? = nil,
        staged gate: StagedRelease.Gate? = nil,
        replacingRollout: Bool = false,
        dryRun: Bool = false,
        concurrency: Int = 8,
        switchingKeys: Bool = false,
        removals: RemovalCheck = RemovalCheck(),
        progress: @escaping @Sendable (TransferProgress) -> Void = { _ in }
    ) async throws -> Report {
        let source = source.standardizedFileURL
        guard let kind = kind(of: source) else { throw PublishError("\(source.path): no such file or folder") }
        try Publisher.refuseUnusableDestination(source, destination)
        if gate != nil, kind != "bundle" {
            throw PublishError(
                "--rollout and --channel stage a bundle's release; a \(kind) is released to everyone",
                kind: .configuration
            )
        }
        // Every release works on a copy whose files are links to the source's: every tool here
        // replaces a file by renaming a new one over it, so the source is written only when
        // the release succeeded (a dry run's and a staged release's, whose root is not the
        // source's, never).
        let working = try ScratchCopy.linkedCopy(of: source)
        let copied = try SourceWriteBack.snapshot(of: working)
        defer {
            try? FileManager.default.removeItem(at: working.deletingLastPathComponent())
            // `.breeze-scratch` beside the source, once empty (never the temporary folder).
            let parent = working.deletingLastPathComponent().deletingLastPathComponent()
            if parent.lastPathComponent == ScratchCopy.folderName { rmdir(parent.path) }
        }
        // The live root, read once: what this release signs above, and what it replaces at
        // the end only if no other release replaced it meanwhile.
        let live = try await LiveRoot.read(of: working, at: destination)
        let layout = layout ?? defaultLayout(for: working, live: live, signing: !keys.isEmpty)
        var report = Report(kind: kind, dryRun: dryRun, staged: gate)
        // Before anything is signed: a release that devices pinning the published key would
        // refuse stops here, the source unchanged.
        if !keys.isEmpty {
            try await SignerContinuity.check(
                working,
                signedBy: keys.map(\.publicKey.base64),
                at: destination,
                switchingKeys: switchingKeys
            )
        }
        let options = SigningOptions(validity: validity, layout: layout)
        var stagedRoot: Data?
        switch kind {
        case "bundle":
            // Signed for the name devices read it by: `release App.freshair site/App-beta` is
            // for the devices that expect "App-beta" there, who refuse one signed for "App".
            var options = options
            options.identity = publishedName(at: destination, source: source)
            let current = try StagedRelease.currentRoot(in: live, at: destination)
            try await prepareBundle(working, keys: keys, options: options, current: current, report: &report)
            if let gate {
                stagedRoot = try stage(
                    working,
                    gate: gate,
                    current: current,
                    replacing: replacingRollout,
                    layout: layout,
                    keys: keys,
                    validity: validity,
                    identity: options.identity!,
                    report: &report
                )
            }
        case "package":
            if !keys.isEmpty {
                var options = options
                options.sequence = try sequenceAbove(live, for: working)
                if options.sequence == nil,
                    PackageSigner.isSignedAsIs(
                        package: working,
                        by: keys.map(\.publicKey),
                        options: options,
                        now: Date(),
                        renewal: renewalWindow
                    )
                {
                    report.signaturesKept = true
                } else {
                    report.signed = try PackageSigner.sign(package: working, with: keys, options: options)
                }
            }
            try refuse(await PackageValidator.run(package: working).problems)
        default:
            // Devices read the repository by the name of the folder it is published to, and a
            // signed index must name that id, whatever the source folder is called.
            let id = publishedName(at: destination, source: source)
            if !keys.isEmpty {
                let above = try sequenceAbove(live, for: working)
                if above == nil,
                    RepositoryPublisher.isSignedAsIs(
                        repository: working,
                        as: id,
                        by: keys.map(\.publicKey),
                        now: Date(),
                        renewal: renewalWindow
                    )
                {
                    report.signaturesKept = true
                } else {
                    var options = options
                    (options.identity, options.sequence) = (id, above)
                    report.signed = try RepositoryPublisher.sign(repository: working, with: keys, options: options)
                }
            }
            try refuse(await RepositoryValidator.run(repository: working, as: id).problems)
        }
        if let signed = report.signed { (report.sequence, report.expires) = (signed.sequence, signed.expires) }
        report.published = try await Publisher.run(
            source: working,
            to: destination,
            layout: layout,
            dryRun: dryRun,
            concurrency: concurrency,
            root: stagedRoot,
            switchingKeys: switchingKeys,
            live: live,
            removals: removals,
            progress: progress
        )
        if !dryRun, gate == nil { try SourceWriteBack.apply(from: working, to: source, made: copied) }
        return report
    }

    /// The layout of a bundle released with none asked for. Over a release in the object
    /// layout: that layout and its store (a new source folder, whose generated root records
    /// none, stays in it). On a new destination (nothing live there): the object layout, where
    /// a release is a transaction, whenever the root can record it: it records no layout, and
    /// is unsigned or about to be signed again (`signing`). `nil`: what the root records.
    /// `onNewDestination: false` leaves a new destination to what the root records.
    static func defaultLayout(
        for source: URL,
        live: LiveRoot?,
        signing: Bool,
        onNewDestination: Bool = true
    ) -> ContentLayout? {
        guard ReleasePipeline.kind(of: source) == "bundle", let live else { return nil }
        if let data = live.data {
            guard let published = try? Manifest(data: data, source: live.path), case .objects = published.layout
            else { return nil }
            return published.layout
        }
        guard onNewDestination else { return nil }
        let rootURL = source.appendingPathComponent("manifest.json")
        if let data = try? Data(contentsOf: rootURL) {
            guard let manifest = try? Manifest(data: data, source: rootURL.path), manifest.layout == .paths,
                signing || manifest.signatures.isEmpty
            else { return nil }
        }
        return .objects(at: ContentLayout.defaultLocation)
    }

    /// The sequence a package's or repository's release must be signed at to come after the
    /// live one: `nil` when the source's own document is already above it, or is it.
    static func sequenceAbove(_ live: LiveRoot?, for working: URL) throws -> Int? {
        guard let live, let liveData = live.data, let published = live.release?.sequence,
            let (path, local) = SignerContinuity.document(of: working)
        else { return nil }
        let data = try? Data(contentsOf: local)
        guard data != liveData else { return nil }
        let own = data.flatMap { SignerContinuity.release(of: path, in: $0)?.sequence } ?? 0
        guard own <= published else { return nil }
        return try ReleaseSequence.after(published, in: "the published \(path)", kind: .server)
    }

    /// The root of a staged release of the prepared bundle `working`, signed as the release
    /// after `current`'s (see ``StagedRelease``).
    private static func stage(
        _ working: URL,
        gate: StagedRelease.Gate,
        current: (json: JSONValue, manifest: Manifest)?,
        replacing: Bool,
        layout: ContentLayout?,
        keys: [SigningKey],
        validity: Duration,
        identity: String,
        report: inout Report
    ) throws -> Data {
        guard let location = try Publisher.objectLocation(working, requested: layout) else {
            throw PublishError(
                "a staged release keeps both releases' files side by side, which the object layout does: "
                    + "add --layout objects",
                kind: .configuration
            )
        }
        guard let current else {
            throw PublishError(
                "nothing is published there yet, so there is no release for the others to keep: "
                    + "release it to everyone first (without --rollout and --channel)",
                kind: .configuration
            )
        }
        guard case .objects = current.manifest.layout else {
            throw PublishError(
                "the release published there is in the path layout, whose files this one would overwrite: "
                    + "release once to everyone with --layout objects, then stage the next",
                kind: .configuration
            )
        }
        try StagedRelease.refuseReplacing(current.json, with: gate, allowed: replacing)
        // The other installs keep the published release's files, signed again here: only if
        // the publisher signed them.
        try StagedRelease.requireSigned(
            current.manifest,
            by: keys,
            source: "the published manifest.json",
            otherwise:
                "Release this folder to everyone with the key (without --rollout and --channel), then stage the next."
        )
        let (nextData, _) = try ObjectLayout.rootDocument(bundle: working, location: location.isEmpty ? nil : location)
        let released = try StagedRelease.release(
            StagedRelease.stagedRoot(next: try JSONReader.parse(nextData), current: current.json, gate: gate),
            after: current.manifest.sequence,
            keys: keys,
            validity: validity,
            identity: identity
        )
        report.signed = released.signed
        report.signaturesKept = false
        (report.sequence, report.expires) = (released.manifest.sequence, released.manifest.expires)
        return released.data
    }

    /// Generates, signs when needed, validates, and checks the bundle as a pinning device would.
    private static func prepareBundle(
        _ bundle: URL,
        keys: [SigningKey],
        options: SigningOptions,
        current: (json: JSONValue, manifest: Manifest)?,
        report: inout Report
    ) async throws {
        // With keys, the signing moves the sequence on; generate must not move it as well.
        let generated = try await ManifestGenerator.run(bundle: bundle, movesSequence: keys.isEmpty)
        report.added = generated.added
        report.removed = generated.removed
        report.digestsUpdated = generated.hash.stale.count
        let manifestURL = bundle.appendingPathComponent("manifest.json")
        let generatedRoot = try Data(contentsOf: manifestURL)
        let before = try Manifest(data: generatedRoot, source: "manifest.json")
        // A release already there with this sequence or a later one, and other content (a staged
        // release being promoted, another machine's release): the next sequence is above it.
        let published = current.flatMap { current -> Int? in
            guard let sequence = current.manifest.sequence, sequence >= before.sequence ?? 0,
                let source = try? JSONReader.parse(generatedRoot),
                source.serializedBytes(indent: 0) != current.json.serializedBytes(indent: 0)
            else { return nil }
            return sequence
        }
        if !keys.isEmpty {
            // The signature covers the layout: a release into another one than the manifest
            // records (`--layout objects` the first time) is signed again, recording it.
            let changesLayout = options.layout.map { $0 != before.layout } ?? false
            let changesIdentity = options.identity.map { $0 != before.identity } ?? false
            if needsSigning(before, by: keys.map(\.publicKey), now: Date()) || published != nil || changesLayout
                || changesIdentity
            {
                var options = options
                if let published {
                    options.sequence = try ReleaseSequence.after(
                        published,
                        in: "the published manifest.json",
                        kind: .server
                    )
                }
                report.signed = try await ManifestSigner.sign(bundle: bundle, with: keys, options: options)
            } else {
                report.signaturesKept = true
            }
        }
        let problems = await BundleValidator.run(bundle: bundle)
        let errors = problems.filter { $0.severity == .error }
        guard errors.isEmpty else { throw PublishError.wouldReachDevices(errors) }
        report.warnings = problems
        let manifest = try Manifest(data: Data(contentsOf: manifestURL), source: "manifest.json")
        (report.sequence, report.expires) = (manifest.sequence, manifest.expires)
        if !keys.isEmpty {
            // What a device pinning these keys checks first: the signature over every digest.
            do {
                try manifest.verify(KeySet(keys: keys.map(\.publicKey)), source: "manifest.json")
            } catch {
                throw PublishError("a device pinning the key would refuse this release: \(error.detail)")
            }
        }
    }

    /// What `source` is: `package` (a file), `repository` (a folder with an `index.json` and no
    /// `manifest.json`) or `bundle` (any other folder); `nil` when there is nothing there.
    package static func kind(of source: URL) -> String? {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: source.path, isDirectory: &isFolder) else { return nil }
        guard isFolder.boolValue else { return "package" }
        let has = { FileManager.default.fileExists(atPath: source.appendingPathComponent($0).path) }
        return has("index.json") && !has("manifest.json") ? "repository" : "bundle"
    }

    /// The name devices read what is published to `destination` by, and expect its signature
    /// to name (a repository's id, a bundle's identity): the last part of its path (a folder's
    /// name, an S3 prefix's last part); the source folder's name when the destination is a
    /// bucket's root.
    static func publishedName(at destination: any PublishDestination, source: URL) -> String {
        let text = "\(destination)"
        let path = text.hasPrefix("s3://") ? String(text.dropFirst(5).drop { $0 != "/" }) : text
        return path.split(separator: "/").last.map(String.init) ?? source.lastPathComponent
    }

    /// Stops a package or repository a device would refuse (``PackageValidator``,
    /// ``RepositoryValidator``, which install it as a device does): nothing is published then.
    private static func refuse(_ problems: [BundleValidator.Problem]) throws {
        let errors = problems.filter { $0.severity == .error }
        guard errors.isEmpty else { throw PublishError.wouldReachDevices(errors) }
    }

    /// Whether the root manifest must be signed again: it changed (generate dropped the old
    /// signatures), a key has not signed it, or its signature expires within a week.
    package static func needsSigning(_ manifest: Manifest, by keys: [TrustedKey], now: Date) -> Bool {
        let signers = Set(manifest.signatures.map(\.key))
        guard keys.allSatisfy({ signers.contains($0.base64) }) else { return true }
        guard let expires = manifest.expires else { return true }
        return expires.timeIntervalSince(now) < renewalWindow
    }

    /// Where a working copy of `source` goes: the temporary folder when it is on the source's
    /// file system (so the copy is links, not bytes), else beside the source, hidden.
}
