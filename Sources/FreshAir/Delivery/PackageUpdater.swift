public import Foundation

/// Keeps one package (`content.tgz` at a fixed URL) installed and current: Fresh's model.
///
/// ```swift
/// let updater = PackageUpdater(
///     remote: URL(string: "https://s3.amazonaws.com/my-bucket/content.tgz")!,
///     store: BundleStore(root: appSupport.appendingPathComponent("content.store")),
///     bundledPackage: Bundle.main.url(forResource: "content", withExtension: "tgz"))
/// try await updater.run()             // in applicationDidBecomeActive
/// let folder = updater.contentDirectory
/// ```
///
/// Each ``run(reporting:)``:
/// 1. installs the bundled copy when nothing is installed, or when its `.meta` sidecar
///    (`{"Last-Modified": "Sat, 10 Nov 2018 14:46:48 GMT"}`) dates it after what is installed;
/// 2. asks the server with `If-Modified-Since` (the installed date) and `If-None-Match`;
///    `304` ends the update with no body;
/// 3. on `200`, streams the package to disk (resuming an interrupted download), installs it
///    into a new version and switches to it atomically, remembering its validators.
///
/// Any failure throws a ``FreshAirError`` and leaves the installed content, or the bundled
/// copy when nothing was installed, in place.
public struct PackageUpdater: Sendable {
    /// The package's URL: `.tgz`, `.tar.gz`, `.tar`, `.gz` or `.zip`.
    public let remote: URL
    /// Where versions are kept, and the live link.
    public var store: BundleStore
    /// The copy shipped inside the app, installed first and whenever nothing better is there.
    public var bundledPackage: URL?
    /// What is done with a package: unpacked into the version folder unless replaced.
    package var installer: any PackageInstaller
    /// Retries, limits, keys and timeouts.
    public var configuration: SyncConfiguration
    let transport: any HTTPTransport

    /// Creates an updater; nothing happens until ``run(reporting:)``, which unpacks each
    /// verified package into a new version.
    ///
    /// - Parameters:
    ///   - remote: the package's URL (`.tgz`, `.tar.gz`, `.tar`, `.gz` or `.zip`).
    ///   - store: where versions are kept, and the live link.
    ///   - bundledPackage: the copy shipped in the app, installed when nothing better is.
    ///   - transport: how requests are sent; by default a `URLSession` of this value's own,
    ///     with ``SyncConfiguration/concurrency`` connections per host. Pass one to share its
    ///     connections.
    ///   - configuration: retries, limits, keys and timeouts.
    public init(
        remote: URL,
        store: BundleStore,
        bundledPackage: URL? = nil,
        transport: Transport? = nil,
        configuration: SyncConfiguration = SyncConfiguration()
    ) {
        self.init(
            remote: remote,
            store: store,
            bundledPackage: bundledPackage,
            installer: nil,
            transport: transport?.base,
            configuration: configuration
        )
    }

    /// The same, with `installer` deciding what is done with a package (unpacked into the
    /// version folder when `nil`).
    package init(
        remote: URL,
        store: BundleStore,
        bundledPackage: URL? = nil,
        installer: (any PackageInstaller)? = nil,
        transport: (any HTTPTransport)?,
        configuration: SyncConfiguration = SyncConfiguration()
    ) {
        self.remote = remote
        self.store = store
        self.bundledPackage = bundledPackage
        let name = remote.lastPathComponent
        self.installer =
            installer
            ?? ExtractingInstaller(
                limits: configuration.extraction,
                singleFileName: name.lowercased().hasSuffix(".gz") ? String(name.dropLast(3)) : name
            )
        self.transport = transport ?? Transport.platformDefault(connectionsPerHost: configuration.concurrency)
        self.configuration = configuration
    }

    /// The package's format, from the remote file name; `.tgz` when it names none.
    package var format: ArchiveFormat { ArchiveFormat(fileName: remote.lastPathComponent) ?? .tarGzip }

    /// Where the installed content is (the live version's folder), or `nil` before any install.
    public var contentDirectory: URL? { store.liveDirectory }

    /// What an update did.
    package struct Result: Sendable, Codable, Hashable {
        /// How an update ended.
        package enum Outcome: String, Sendable, Codable {
            /// A new package was downloaded and installed.
            case downloaded
            /// The server answered `304`: what is installed is current.
            case notModified
            /// The server answered `200` with a `Last-Modified` no later than the installed
            /// copy's (``serverLastModified``): the installed copy (a newer bundled one, say) stays.
            case serverCopyNotNewer
            /// The server still offers only the package this device rolled back from
            /// (``BundleStore/rollBackIfUnconfirmed(allowedLaunches:inForeground:)``); the live version stays.
            case keptAfterRollback
        }

        /// How the update ended.
        package var outcome: Outcome
        /// The bundled copy was installed during this update (first launch, or a newer `.meta`).
        package var installedBundled: Bool
        /// The live version afterwards.
        package var version: Int?
        /// Body bytes of the package downloaded.
        package var bytesDownloaded: Int64
        /// Bytes of the package not downloaded: chunks of the installed package reused (a
        /// signed `.tar` with a chunk index; see `PackageSignature/chunkIndex`).
        package var bytesSaved: Int64 = 0
        /// The live version was damaged (``BundleStore/verify()``, or its files gone), so the
        /// package was fetched whole to replace it.
        package var replacedDamaged = false
        /// The installed content's `Last-Modified`.
        package var lastModified: String?
        /// The server's `Last-Modified`, when its copy was found no newer than the installed one.
        package var serverLastModified: String?

        /// One line for a terminal: what happened and what it cost (the run's `requests` and
        /// bytes wasted).
        func oneLine(requests count: Int, bytesWasted: Int64) -> String {
            let bundled = installedBundled ? "bundled copy installed; " : ""
            let requests = "\(count) request\(count == 1 ? "" : "s")\(wastedNote(bytesWasted))"
            switch outcome {
            case .notModified:
                return "Package current (304 Not Modified); \(bundled)\(requests)."
            case .serverCopyNotNewer:
                return
                    "Package current: the server's copy (Last-Modified \(serverLastModified ?? "unknown")) is not newer than the installed one "
                    + "(\(lastModified ?? "unknown")); \(bundled)\(requests)."
            case .keptAfterRollback:
                return
                    "Kept version \(version ?? 0): the server still offers the package rolled back from; \(requests)."
            case .downloaded:
                let saved = bytesSaved > 0 ? ", \(ByteCount(bytesSaved)) reused from the installed package" : ""
                let damaged = replacedDamaged ? " in place of the damaged one" : ""
                return
                    "Installed package version \(version ?? 0)\(damaged) (\(ByteCount(bytesDownloaded)) downloaded\(saved)); \(bundled)\(requests)."
            }
        }
    }

    /// Runs one update and returns the package's own account of it (tests read it);
    /// ``run(reporting:)`` gives the same as every delivery mode does.
    @discardableResult
    package func update() async throws -> Result {
        try await run(reporting: { _ in }).package!
    }

    /// Installs the bundled copy when it should be (nothing usable installed, or its `.meta`
    /// newer), without the network; `true` when it did. Unlike an update, a bundled copy that
    /// fails its checks throws here, saying why.
    package func installBundledCopy(
        reporting report: @escaping @Sendable (SyncEvent) -> Void = { _ in }
    ) async throws -> Bool {
        let version = try await store.update { update in try await installBundledIfNewer(&update) }
        if let version { report(.activated(version: version)) }
        return version != nil
    }

    /// One update with the store's lock taken: the bundled copy, then the server.
    private func updateHoldingLock(_ update: inout StoreUpdate, run: DeliveryRun) async throws -> Result {
        var (result, installedBundled) = try await BundledFirst.run {
            try await installBundledIfNewer(&update) != nil
        } thenServer: {
            try await fetchAndInstall(&update, run: run)
        }
        result.installedBundled = installedBundled
        return result
    }

    /// Installs the bundled copy when nothing usable is installed or its `.meta` is newer;
    /// the version it went live as, or `nil` when it was not installed.
    private func installBundledIfNewer(_ update: inout StoreUpdate) async throws -> Int? {
        guard let bundled = try bundledCandidate(live: update.live) else { return nil }
        let activated = try await update.assemble { staged in
            try await record(
                installing: bundled.file,
                into: staged,
                unpacked: nil,
                validators: HTTPValidators(lastModified: bundled.lastModified),
                origin: .bundled
            )
        }
        return activated?.id
    }

    /// What the device has, as far as asking the server goes.
    private struct Installed {
        var live: VersionRecord?
        /// What this device rolled back from, when the server may still offer it.
        var rejected: BundleStore.RejectedContent?
        /// The live package is there and `verify()` found nothing damaged.
        var intact: Bool
        /// The validators to ask with: `nil` to fetch whole.
        var known: HTTPValidators?
    }

    /// Asks the server (the signed document first, when keys are pinned) and installs what it
    /// offers, when that is new.
    private func fetchAndInstall(_ update: inout StoreUpdate, run: DeliveryRun) async throws -> Result {
        let live = update.live
        run.report(.checking(remote))
        // After a rollback, ask whether the server still has what was rolled back from.
        let rejected = live == nil ? nil : try store.rejected(from: remote.absoluteString)
        // A package found damaged (`verify()`) is fetched whole, as if nothing were installed.
        let intact = installer.packageExists(liveFolder: store.liveDirectory) && !store.liveVersionIsDamaged
        let installed = Installed(
            live: live,
            rejected: rejected,
            intact: intact,
            known: intact
                ? BundleStore.RejectedContent.validatorsToAsk(rejected: rejected, live: live?.validators) : nil
        )
        var job = DownloadJob(
            label: remote.lastPathComponent,
            url: remote,
            partialPath: update.partialsPath + "/"
                + ContentHash.of(Array(remote.absoluteString.utf8), using: .sha256).hex,
            expectedHash: nil,
            expectedSize: nil,
            limit: configuration.sizeCap(declared: false),
            validators: installed.known ?? HTTPValidators()
        )
        job.isTransient = true
        job.returnsValidators = true  // stored, for the next check to be conditional
        var result = Result(
            outcome: .notModified,
            installedBundled: false,
            version: live?.id,
            bytesDownloaded: 0,
            lastModified: live?.validators?.lastModified
        )
        result.replacedDamaged = live != nil && !intact
        // With keys pinned, the signed `.sig` document is what is checked conditionally; the
        // package is then fetched whole and must match its signed digest and size.
        var signed: SignedPackage?
        // Network waits, here and below, without the store's lock.
        let keys = try await update.withoutLock { [store] in try await run.currentKeys(store) }
        if let keys {
            switch try await checkSignedDocument(&update, keys: keys, installed: installed, run: run) {
            case .notModified:
                if BundleStore.RejectedContent.keepsRollback(rejected, after: .notModified) {
                    result.outcome = .keptAfterRollback
                }
                return result
            case .samePackage:
                return result
            case .newPackage(let release):
                job.expectedHash = release.document.sha256
                job.expectedSize = release.document.size
                job.listedIn = .packageSignature
                job.limit = configuration.maxFileSize
                job.validators = nil
                signed = release
            }
        }
        try await download(
            job,
            signed: signed,
            installed: installed,
            into: &update,
            result: &result,
            run: run
        )
        result.version = update.live?.id
        return result
    }

    /// What the signed document said.
    private enum SignedAnswer {
        /// `304`: the document is the one installed (and not expired).
        case notModified
        /// A newer document for the package installed: recorded, nothing to download.
        case samePackage
        /// A package to download, to match the document's digest and size.
        case newPackage(SignedPackage)
    }

    /// Fetches and verifies `<package>.sig`, and decides from it whether the package is new.
    private func checkSignedDocument(
        _ update: inout StoreUpdate,
        keys: KeySet,
        installed: Installed,
        run: DeliveryRun
    ) async throws -> SignedAnswer {
        let live = installed.live
        // A bundled copy's validators are the package's, not the document's: ask afresh.
        let documentValidators = live?.origin == .bundled ? nil : installed.known
        let verified = try await update.withoutLock {
            try await self.signedRelease(run: run, keys: keys, validators: documentValidators, live: live)
        }
        guard let release = verified else {
            try FreshnessCheck.checkStillValid(
                live?.expires,
                source: signatureURL.absoluteString,
                configuration: configuration
            )
            return .notModified
        }
        if var current = live, installed.intact, current.packageDigest == release.document.sha256.hex {
            // The same package under a newer signed document: remember the document.
            current.validators = release.validators
            release.record(in: &current)
            try await update.persist(current)
            return .samePackage
        }
        return .newPackage(release)
    }

    /// Downloads the package (or rebuilds it from the installed one's chunks), unpacking it
    /// into a new version as it arrives, and activates that version.
    private func download(
        _ job: DownloadJob,
        signed: SignedPackage?,
        installed: Installed,
        into update: inout StoreUpdate,
        result: inout Result,
        run: DeliveryRun
    ) async throws {
        let (fetcher, report) = (run.fetcher, run.report)
        let (lock, liveID) = (update.lock, update.live?.id)
        _ = try await update.assemble { staged in
            // The default installer unpacks while the package downloads; others get the file.
            let streaming = archive(from: remote.absoluteString).streaming(into: staged)
            let progress = ProgressCounter(
                filesTotal: 1,
                bytesExpected: job.expectedSize,
                uptime: fetcher.environment.uptime,
                report: report
            )
            let (outcome, saved) = try await StoreUpdate.withoutLock(lock, store: store, liveID: liveID) {
                [staged] () async throws -> (FetchOutcome<DownloadedFile>, Int64) in
                if let signed, let live = installed.live, installed.intact,
                    let rebuilt = try await rebuildFromChunks(
                        job,
                        signed: signed.document,
                        live: live,
                        into: staged.id,
                        fetcher: fetcher,
                        streaming: streaming,
                        progress: progress
                    )
                {
                    return (.fetched(rebuilt.file, signed.validators), rebuilt.saved)
                }
                return (try await fetcher.download(job, tee: streaming, progress: { progress.add(bytes: $0) }), 0)
            }
            result.bytesSaved = saved
            guard case .fetched(let file, let validators) = outcome else {
                if case .notNewer(let date) = outcome {
                    (result.outcome, result.serverLastModified) = (.serverCopyNotNewer, date)
                }
                if BundleStore.RejectedContent.keepsRollback(installed.rejected, after: .notModified) {
                    result.outcome = .keptAfterRollback
                }
                return nil
            }
            progress.completeFiles(1)
            // The package itself is not kept: gone before activation flushes the disk.
            defer { try? Disk.remove(file.path) }
            result.outcome = .downloaded
            result.bytesDownloaded = file.size - result.bytesSaved
            result.lastModified = validators.lastModified
            var record: VersionRecord
            do {
                record = try await self.record(
                    installing: URL(fileURLWithPath: file.path),
                    into: staged,
                    unpacked: file.teedWholeBody ? streaming : nil,
                    validators: signed?.validators ?? validators,
                    origin: .remote
                )
            } catch let error as FreshAirError where error.isContentCheckFailure && file.contentEncoding != nil {
                // An encoded body that unpacks is kept (an intact .tgz stored with
                // Content-Encoding metadata); one that does not is the encoding's fault.
                throw FreshAirError.unrequestedEncoding(url: remote, encoding: file.contentEncoding!)
            }
            signed?.record(in: &record)
            return record
        }
    }

    /// The package as an archive to install, its errors naming `source`.
    private func archive(from source: String) -> ArchiveDownload {
        ArchiveDownload(installer: installer, format: format, source: source)
    }

    /// Where the package's signed document is: `<package URL>.sig`.
    var signatureURL: URL { URL(string: remote.absoluteString + PackageSignature.suffix)! }

    /// A verified signed document and the validators it came with.
    private struct SignedPackage {
        var document: PackageSignature
        var validators: HTTPValidators

        /// Records in a version what it keeps of the document: the digest, sequence and expiry.
        func record(in record: inout VersionRecord) {
            record.packageDigest = document.sha256.hex
            record.sequence = document.release.sequence
            record.expires = document.release.expires
        }
    }

    /// Fetches `<package>.sig` (conditionally), verifies its signature, identity, sequence and
    /// expiry, and raises the high-water mark; `nil` on `304`.
    private func signedRelease(
        run: DeliveryRun,
        keys: KeySet,
        validators: HTTPValidators?,
        live: VersionRecord?
    ) async throws -> SignedPackage? {
        let url = signatureURL
        let data: Data
        let received: HTTPValidators
        do {
            guard
                case .fetched(let body, let newValidators) = try await run.root(
                    at: url,
                    validators: validators,
                    limit: 64 << 10
                )
            else { return nil }
            (data, received) = (try body.bytes(), newValidators)  // never spilled: asked for in memory
        } catch let error as FreshAirError where error.status == 404 {
            throw FreshAirError.manifest(ManifestError(source: url.absoluteString, problem: .unsigned))
        }
        let document: PackageSignature
        do throws(ManifestError) {
            document = try PackageSignature(data: data, source: url.absoluteString)
            try document.release.verify(keys, source: url.absoluteString)
        } catch { throw FreshAirError.manifest(error) }
        try RootAcceptance(
            document: url,
            source: remote.absoluteString,
            marks: store.highWaterMarks,
            configuration: configuration,
            defaultIdentity: remote.lastPathComponent
        )
        .accept(
            document.release.offered(digest: ContentHash.of(data, using: .sha256).hex),
            liveSequence: live?.sequence
        )
        return SignedPackage(document: document, validators: received)
    }

    /// The bundled package, if it should be installed now: nothing (usable) is installed, or its
    /// `.meta` date is later than the installed content's.
    private func bundledCandidate(live: VersionRecord?) throws -> (file: URL, lastModified: String?)? {
        guard let bundled = bundledPackage, Disk.exists(bundled.path) else { return nil }
        let meta = BundledPackageMeta(package: bundled)
        guard let live, installer.packageExists(liveFolder: store.liveDirectory) else {
            return (bundled, meta?.lastModified)
        }
        guard let bundledDate = meta?.date else { return nil }
        let latest = configuration.environment.now().addingTimeInterval(configuration.clockSkewTolerance.seconds)
        // An installed version with no believable date (a server that sent none, or one in the
        // future) cannot be shown older: it stays, rather than the bundled copy on every update.
        guard let installedDate = live.validators?.droppingDate(after: latest).lastModified.flatMap(HTTPDate.parse)
        else { return nil }
        return bundledDate > installedDate ? (bundled, meta?.lastModified) : nil
    }

    /// Installs into `staged` (from the file, unless `unpacked` already did it while
    /// downloading) and returns the version's record.
    private func record(
        installing package: URL,
        into staged: StagedVersion,
        unpacked: StreamingExtraction?,
        validators: HTTPValidators,
        origin: VersionRecord.Origin
    ) async throws -> VersionRecord {
        // Errors are named by where the package came from, not by the partial file.
        let source = origin == .bundled ? package.path : remote.absoluteString
        let records = try await archive(from: source).install(package.path, into: staged, streamed: unpacked)
        // The files a `.tar` unpacked to, for the next package to reuse its chunks from: the
        // layout recorded as it unpacked on the way, else read from the file it was unpacked
        // from. Never read from the file after unpacking on the way: a package rebuilt by chunks
        // is only its fetched ranges there, and a layout given up as too large would be again.
        if format == .tar, let extracting = installer as? ExtractingInstaller {
            let layout: TarLayout? =
                if let unpacked {
                    unpacked.tarLayout
                } else {
                    try? await BlockingPool.run { [path = package.path] in try TarLayout.scan(tarAt: path) }
                }
            if let layout {
                store.recordTarLayout(
                    layout,
                    of: package,
                    for: staged.id,
                    movedUp: extracting.topLevelFolderToStrip,
                    installed: records
                )
            }
        }
        var record = VersionRecord(
            id: staged.id,
            source: remote.absoluteString,
            created: configuration.environment.now(),
            validators: validators,
            files: records
        )
        record.origin = origin
        record.packageFormat = format.rawValue
        // With keys pinned, the bundled copy's digest lets a signed document that names the
        // same package skip the download.
        if origin == .bundled, configuration.pinsKeys {
            record.packageDigest = try await BlockingPool.run {
                try ContentHash.ofFile(at: package, using: .sha256).hash.hex
            }
        }
        return record
    }
}

/// The `<package>.meta` sidecar of a bundled package: `{"Last-Modified": "<HTTP date>"}`.
package struct BundledPackageMeta {
    package var lastModified: String
    package var date: Date

    /// Reads `<package>.meta`; `nil` when there is none, or it does not say a date.
    package init?(package: URL) {
        let url = URL(fileURLWithPath: package.path + ".meta")
        guard let data = try? Data(contentsOf: url),
            let text = (try? JSONReader.parse(data))?["Last-Modified"]?.string, let date = HTTPDate.parse(text)
        else { return nil }
        self.lastModified = text
        self.date = date
    }
}

extension PackageUpdater: ContentUpdater, DeliverySource {
    /// Runs one update, reporting it as every delivery mode does: the package is the one file,
    /// and the summary's ``SyncSummary/oneLine`` says how the check ended.
    @discardableResult
    public func run(reporting report: @escaping @Sendable (SyncEvent) -> Void) async throws -> SyncSummary {
        try await DeliveryRun.perform(self, report: report)
    }

    var rootURL: URL { remote }
    var runStore: BundleStore { store }
    var localRoot: URL? { remote.isFileURL ? remote.deletingLastPathComponent() : nil }

    func deliver(_ update: inout StoreUpdate, run: DeliveryRun) async throws -> SyncSummary {
        let result = try await updateHoldingLock(&update, run: run)
        if result.outcome == .notModified { run.report(.notModified) }
        if result.outcome == .downloaded {
            run.report(.downloaded(path: remote.lastPathComponent, bytes: result.bytesDownloaded))
        }
        if result.outcome == .downloaded || result.installedBundled, let version = result.version {
            run.report(.activated(version: version))
        }
        return SyncSummary(result, package: remote.lastPathComponent)
    }
}

extension PackageUpdater.Result {
    /// Reads a result written by this or an earlier FreshAir: fields added after the first
    /// release (bytes saved, a damaged copy replaced) take their defaults when absent.
    package init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        outcome = try values.decode(Outcome.self, forKey: .outcome)
        installedBundled = try values.decode(Bool.self, forKey: .installedBundled)
        version = try values.decodeIfPresent(Int.self, forKey: .version)
        bytesDownloaded = try values.decode(Int64.self, forKey: .bytesDownloaded)
        bytesSaved = try values.decodeIfPresent(Int64.self, forKey: .bytesSaved) ?? 0
        replacedDamaged = try values.decodeIfPresent(Bool.self, forKey: .replacedDamaged) ?? false
        lastModified = try values.decodeIfPresent(String.self, forKey: .lastModified)
        serverLastModified = try values.decodeIfPresent(String.self, forKey: .serverLastModified)
    }
}
