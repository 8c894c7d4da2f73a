package import Foundation
package import FreshAir

/// `breeze publish`: puts a bundle, a package or a repository folder on a destination so that
/// a device checking at any moment sees the old content or the new, never a manifest naming a
/// file that is not there yet.
///
/// 1. A bundle is checked first: every digest current (`breeze hash`) and every signature
///    matching (`breeze sign`). Devices would refuse anything else, so it is not published.
/// 2. Only files whose bytes differ from what the destination holds are uploaded.
/// 3. Content goes first, several files at a time; then the documents that name other files
///    (`manifest.json`, `index.json`), one at a time, deepest first, the root one last.
/// 4. With `delete`, files the source no longer has are removed, after the root is in place.
///
/// A bundle whose root manifest records the object layout, or published with `layout:
/// .objects`, goes up as objects named by their digests instead (``ObjectLayout``).
package enum Publisher {
    /// What a publish did (or, with `dryRun`, would do).
    package struct Report: Sendable, Codable {
        /// Uploaded, in the order they went up.
        package var uploaded: [String] = []
        /// Bytes sent: the parts of a resumed multipart upload that S3 already held are not counted.
        package var bytesUploaded: Int64 = 0
        /// Files the destination already held byte for byte.
        package var unchanged = 0
        /// Removed with `delete`, after the root manifest was in place.
        package var deleted: [String] = []
        package var dryRun = false
        /// `paths`, or `objects` (with where, when not `objects/`).
        package var layout = "paths"
        /// Objects removed (or, in a dry run, to remove) by garbage collection, by digest.
        package var collected: [String] = []
        /// Unchanged files made readable as uploads are (S3 objects put before `--acl`).
        package var accessGranted = 0
        /// What devices may refuse in what was published, said once it is there.
        package var warnings: [String] = []
        /// Nothing was published there before: devices get their first release.
        package var first = false
        /// What the root no longer lists of the live one's (removed for devices).
        package var removedFromLive = RemovalCheck.Removed()
    }

    /// Publishes `source` (a folder or one file) to `destination`.
    ///
    /// - Throws: ``PublishError`` for a bundle that is not ready, a signing key in the folder,
    ///   or a destination that refused a request (with what it said and what to check).
    ///
    /// - Parameters:
    ///   - layout: how a bundle goes up; `nil`: as its root manifest records (paths when it
    ///     does not say); `.objects(at: "")`: objects, where the root records or in `objects/`.
    ///     Packages and repositories always keep their paths.
    ///   - collect: in the object layout, remove objects older versions no longer need.
    ///   - root: in the object layout, the root manifest to publish in place of the bundle's own
    ///     (a staged release's; see ``StagedRelease``).
    ///   - switchingKeys: publish a document signed only by other keys than the published one
    ///     (see ``SignerContinuity``): the apps already trust the new key.
    ///   - objectsWhenNew: with no `layout`, a bundle on a new destination goes up in the object
    ///     layout unless its root is signed for the path layout (`breeze publish`).
    package static func run(
        source: URL,
        to destination: any PublishDestination,
        layout: ContentLayout? = nil,
        collect: ObjectCollector? = nil,
        delete: Bool = false,
        dryRun: Bool = false,
        concurrency: Int = 8,
        root: Data? = nil,
        switchingKeys: Bool = false,
        live: LiveRoot? = nil,
        removals: RemovalCheck = RemovalCheck(),
        objectsWhenNew: Bool = false,
        progress: @escaping @Sendable (TransferProgress) -> Void = { _ in }
    ) async throws -> Report {
        try refuseUnusableDestination(source, destination)
        let resolved = source.standardizedFileURL.resolvingSymlinksInPath()
        let warnings = root == nil ? identityWarning(resolved, at: destination).map { [$0] } ?? [] : []
        // Read once, first: the root is replaced at the end only if it is still this one.
        var live = live
        if live == nil { live = try await LiveRoot.read(of: source.standardizedFileURL, at: destination) }
        let transaction = RootTransaction(live: live, removals: removals, dryRun: dryRun)
        // None asked for: the object layout over a release in it (a new source folder's root
        // records none), and on a new destination when `objectsWhenNew` (`breeze publish`).
        var layout = layout
        if layout == nil {
            layout = ReleasePipeline.defaultLayout(
                for: resolved,
                live: live,
                signing: false,
                onNewDestination: objectsWhenNew
            )
            // The originals' format (SHA-1 digests, or none) stays in the path layout it needs.
            if layout != nil, live?.object == nil, (try? ObjectLayout.objects(of: resolved)) == nil { layout = nil }
        }
        if let location = try objectLocation(source, requested: layout) {
            try await checkBundle(resolved)
            try await SignerContinuity.check(source.standardizedFileURL, at: destination, switchingKeys: switchingKeys)
            var report = try await ObjectLayout.publish(
                bundle: resolved,
                location: location.isEmpty ? nil : location,
                to: destination,
                delete: delete,
                dryRun: dryRun,
                concurrency: concurrency,
                collect: collect,
                root: root,
                transaction: transaction,
                progress: progress
            )
            report.warnings = warnings + report.warnings
            return report
        }
        guard root == nil else {
            throw PublishError(
                "a staged root manifest needs the object layout (--layout objects)",
                kind: .configuration
            )
        }
        if collect != nil {
            throw PublishError(
                "--gc applies to the object layout (--layout objects), where old objects pile up",
                kind: .configuration
            )
        }
        let files = try await filesToPublish(source)
        // By the name it is published under: a package given as a link keeps the link's name.
        try await SignerContinuity.check(source.standardizedFileURL, at: destination, switchingKeys: switchingKeys)
        var report = Report(dryRun: dryRun, warnings: warnings)
        if let live, let next = files.first(where: { $0.path == live.path }) {
            try transaction.admit(try Data(contentsOf: next.url), at: destination, into: &report)
        }
        let existing = try await destination.list()

        // Comparing reads files (hashes them), so it runs as wide as the uploads; order is kept.
        let held = try await inParallel(files.indices, width: concurrency) { index -> Bool in
            guard let object = existing[files[index].path] else { return false }
            return try await destination.holds(files[index], as: object)
        }
        let changed = zip(files, held).filter { !$0.1 }.map(\.0)
        report.unchanged = files.count - changed.count
        let content = changed.filter { !$0.isPointer }
        let pointers = changed.filter(\.isPointer).sorted {
            let (a, b) = ($0.path.split(separator: "/").count, $1.path.split(separator: "/").count)
            return a == b ? $0.path < $1.path : a > b
        }
        let published = Set(files.map(\.path))
        let stale = delete ? existing.keys.filter { !published.contains($0) }.sorted() : []

        if dryRun {
            report.uploaded = content.map(\.path) + pointers.map(\.path)
            report.bytesUploaded = changed.reduce(0) { $0 + $1.size }
            report.deleted = stale
            return report
        }
        let counter = UploadCounter(files: changed.count, bytes: changed.reduce(0) { $0 + $1.size }, report: progress)
        let sent = try await inParallel(content.indices, width: concurrency) { index in
            let bytes = try await destination.upload(content[index], replacing: existing[content[index].path])
            counter.finished(bytes: content[index].size)
            return bytes
        }
        report.uploaded = content.map(\.path)
        report.bytesUploaded = sent.reduce(0, +)
        for file in pointers {
            report.bytesUploaded +=
                try await file.path == live?.path
                ? live!.replace(with: file, at: destination)
                : destination.upload(file, replacing: existing[file.path])
            report.uploaded.append(file.path)
            counter.finished(bytes: file.size)
        }
        report.accessGranted = try await destination.grantAccess(to: zip(files, held).filter(\.1).map(\.0.path))
        for path in stale {
            try await destination.delete(path)
            report.deleted.append(path)
        }
        return report
    }

    /// For a bundle to publish in the object layout, where its objects go (`""`: where the
    /// root manifest says, or `objects/`); `nil` for the path layout.
    static func objectLocation(_ source: URL, requested: ContentLayout?) throws -> String? {
        let rootURL = source.appendingPathComponent("manifest.json")
        guard FileManager.default.fileExists(atPath: rootURL.path) else {
            if case .objects = requested {
                throw PublishError(
                    "the object layout is for bundles (a folder with manifest.json); packages and repositories keep their paths",
                    kind: .configuration
                )
            }
            return nil
        }
        let recorded = try Manifest(data: Data(contentsOf: rootURL), source: rootURL.path).layout
        switch (requested, recorded) {
        case (nil, .paths), (.paths?, .paths): return nil
        case (nil, .objects): return ""
        case (.objects(let location)?, _): return location
        case (.paths?, .objects):
            throw PublishError(
                "manifest.json records the object layout: publish with --layout objects, or remove its \"layout\" member "
                    + "(`breeze sign --layout paths` for a signed one)"
            )
        }
    }

    /// `work` for every index, at most `width` at once; results in index order. The first error ends it.
    static func inParallel<Output: Sendable>(
        _ indices: Range<Int>,
        width: Int,
        _ work: @escaping @Sendable (Int) async throws -> Output
    ) async throws -> [Output] {
        try await withThrowingTaskGroup(of: (Int, Output).self) { group in
            var pending = indices.makeIterator()
            func startNext() {
                guard let index = pending.next() else { return }
                group.addTask { (index, try await work(index)) }
            }
            for _ in 0..<max(1, width) { startNext() }
            var results: [Int: Output] = [:]
            while let (index, output) = try await group.next() {
                results[index] = output
                startNext()
            }
            return indices.map { results[$0]! }
        }
    }

    /// What a device reading `destination` would say of a signed bundle or repository whose
    /// signature names another identity than the name it is published under (`breeze sign`
    /// for "App", published to `site/App-beta`): devices expect the name in their URL unless
    /// their app sets `SyncConfiguration.expectedIdentity`, so this is a warning, not a refusal.
    static func identityWarning(_ source: URL, at destination: any PublishDestination) -> String? {
        // A package keeps its own name wherever it goes (``PublishDestinations/folder(for:publishing:)``).
        guard ReleasePipeline.kind(of: source) != "package", let (path, local) = SignerContinuity.document(of: source),
            let data = try? Data(contentsOf: local), let release = SignerContinuity.release(of: path, in: data),
            !release.signatures.isEmpty, let identity = release.identity
        else { return nil }
        let name = ReleasePipeline.publishedName(at: destination, source: source)
        guard identity != name else { return nil }
        return
            "\(source.lastPathComponent) is signed for \"\(identity)\", but devices that read it here expect \"\(name)\", the name in their URL, and refuse it unless their app sets SyncConfiguration.expectedIdentity. `breeze release` signs it for where it goes (or `breeze sign --identity \(name)`)."
    }

    /// Refuses a folder destination that cannot take the release, before anything is generated
    /// or written:
    /// - one inside the folder being published (`breeze release . site/App.freshair` run in the
    ///   bundle): every release would list and publish the one before it, a copy deeper each
    ///   time;
    /// - one that is a file, or lies under one (`site/content.tgz`, a package published there
    ///   before, given for a bundle): the folder's files cannot be written there.
    static func refuseUnusableDestination(_ source: URL, _ destination: any PublishDestination) throws {
        guard let folder = destination as? FolderDestination else { return }
        try refuseFile(at: folder.root, publishing: source)
        guard ["bundle", "repository"].contains(ReleasePipeline.kind(of: source)),
            BundleFolder.lies(folder.root, inside: source)
        else { return }
        let resolved = source.standardizedFileURL.resolvingSymlinksInPath()
        throw PublishError(
            "\(folder.root.path) is inside \(source.path), the folder being published: each release would publish the one before it inside itself. Publish to a folder outside it, such as \(resolved.deletingLastPathComponent().appendingPathComponent("site").appendingPathComponent(resolved.lastPathComponent).path)",
            kind: .configuration
        )
    }

    /// Throws when `root`, or the nearest of its folders that exists, is not a folder.
    private static func refuseFile(at root: URL, publishing source: URL) throws {
        let existing = BundleFolder.nearestExisting(root)
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: existing.path, isDirectory: &isFolder), !isFolder.boolValue
        else { return }
        let beside = existing.deletingLastPathComponent().appendingPathComponent(
            source.standardizedFileURL.lastPathComponent
        )
        throw PublishError(
            "\(existing.path) is a file, not a folder: what is published goes into a folder at the destination. Give a folder (such as \(beside.path)), or remove the file first",
            kind: .configuration
        )
    }

    /// The files of a folder (hidden ones and editor leftovers skipped) or one file; a bundle
    /// only when it is current and its signatures match.
    static func filesToPublish(_ source: URL) async throws -> [LocalFile] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: source.path, isDirectory: &isFolder) else {
            throw PublishError("\(source.path) does not exist")
        }
        guard isFolder.boolValue else {
            // A package goes up with its chunk index and its signed document, which then goes last.
            let signature = URL(fileURLWithPath: source.path + PackageSignature.suffix)
            let chunkIndex = try checkPackageSignature(source, signature)
            return [source, chunkIndex, signature].compactMap { $0 }.filter {
                FileManager.default.fileExists(atPath: $0.path)
            }.map { file in
                // A package given as a link (`latest.tgz`) goes up under the link's name, with
                // the bytes it points to: a copy of the link itself would point nowhere there.
                let bytes = file.resolvingSymlinksInPath()
                let size =
                    ((try? FileManager.default.attributesOfItem(atPath: bytes.path))?[.size] as? NSNumber)?.int64Value
                    ?? 0
                return LocalFile(path: file.lastPathComponent, url: bytes, size: size)
            }
        }
        let root = source.standardizedFileURL.resolvingSymlinksInPath()
        if FileManager.default.fileExists(atPath: root.appendingPathComponent("manifest.json").path) {
            try await checkBundle(root)
        } else if FileManager.default.fileExists(atPath: root.appendingPathComponent("index.json").path) {
            try checkRepository(root)
        }
        let files = try BundleFolder.files(in: root)
            .map { LocalFile(path: $0.path, url: root.appendingPathComponent($0.path), size: $0.size) }
        let document = SignerContinuity.document(of: root)
        try SecretScan.refuse(
            files,
            signedAs: document.flatMap { try? Data(contentsOf: $0.local) },
            path: document?.path ?? ""
        )
        return files
    }

    /// A `.sig` that no longer describes its package, or names a chunk index that is not
    /// beside it as signed, would make every device that pins keys refuse the download: not
    /// published. Returns the chunk index the document names, to go up before it.
    static func checkPackageSignature(_ package: URL, _ signature: URL) throws -> URL? {
        guard let data = try? Data(contentsOf: signature) else { return nil }
        let document = try PackageSignature(data: data, source: signature.path)
        let (digest, size) = try FileDigests.digest(of: package, using: .sha256)
        guard document.sha256 == digest, document.size == size else {
            throw PublishError(
                "\(signature.lastPathComponent) describes another \(package.lastPathComponent) (changed since signing): run `breeze sign` again, then publish"
            )
        }
        guard let signed = document.chunkIndex else { return nil }
        let index = URL(fileURLWithPath: package.path + ChunkIndex.suffix)
        guard let (indexDigest, indexSize) = try? FileDigests.digest(of: index, using: .sha256),
            indexDigest == signed.sha256, indexSize == signed.size
        else {
            throw PublishError(
                "\(signature.lastPathComponent) names a chunk index that \(index.lastPathComponent) is not (missing or changed since signing): run `breeze sign` again, then publish"
            )
        }
        return index
    }

    /// A signed index must still match its signatures and the archives it names.
    static func checkRepository(_ root: URL) throws {
        let indexURL = root.appendingPathComponent("index.json")
        let index = try RepositoryIndex(data: Data(contentsOf: indexURL), source: indexURL.path)
        if let message = index.release.signedMessage,
            let stale = index.release.signatures.first(where: {
                (try? TrustedKey(base64: $0.key))?.verifies($0.signature, for: message) != true
            })
        {
            throw PublishError(
                "index.json: the signature by \(stale.key) does not match the content: run `breeze sign` again, then publish"
            )
        }
        for (name, bundle) in index.bundles.sorted(by: { $0.key < $1.key }) {
            guard let expected = bundle.sha256 else { continue }
            let archive = root.appendingPathComponent("\(name)-\(bundle.version).tar.gz")
            let actual = try? FileDigests.digest(of: archive, using: .sha256)
            guard actual?.hash.hex == expected, actual?.size == bundle.size else {
                throw PublishError(
                    "index.json names \(archive.lastPathComponent) with another digest or size than the file there: run `breeze sign` again"
                )
            }
        }
    }

    /// What devices would refuse is not published: stale digests, missing files (and, in
    /// ``SignerContinuity``, a signature devices do not know).
    static func checkBundle(_ root: URL) async throws {
        let check = try await BundleHasher.run(bundle: root, check: true)
        if !check.stale.isEmpty || !check.missing.isEmpty {
            let first = check.stale.first.map { "\($0.manifest): \($0.filename)" } ?? check.missing.first ?? ""
            throw PublishError(
                "\(root.lastPathComponent) is not ready: \(check.stale.count) stale and \(check.missing.count) missing entries "
                    + "(first: \(first)); run `breeze hash`, and `breeze sign` if you sign, then publish"
            )
        }
        let rootURL = root.appendingPathComponent("manifest.json")
        let manifest = try Manifest(data: Data(contentsOf: rootURL), source: rootURL.path)
        if let problem = ManifestSigner.signatureProblems(manifest).first {
            throw PublishError("\(root.lastPathComponent) is not ready: manifest.json: \(problem)")
        }
    }
}
