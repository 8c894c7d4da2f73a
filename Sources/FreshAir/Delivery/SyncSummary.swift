import Foundation

/// What one update did, in any delivery mode: one line of text, the requests, bytes and
/// seconds it cost, and what was installed, reused and removed. ``oneLine`` names what the
/// mode did in its own terms (a package's server copy not newer, a repository's bundles moved).
public struct SyncSummary: Sendable, Hashable, Codable {
    /// How an update ended.
    public enum Outcome: String, Sendable, Codable {
        /// A new version went live.
        case updated
        /// Nothing changed for this device.
        case alreadyCurrent
        /// The server still offers only the content this device rolled back from
        /// (``BundleStore/rollBackIfUnconfirmed(allowedLaunches:inForeground:)``); the live version stays
        /// until something new is published.
        case keptAfterRollback
    }

    /// How the update ended.
    public var outcome: Outcome
    /// The live version afterwards: this device's own count of what it installed.
    public var version: Int?
    /// The signed release live afterwards: the `sequence` its publisher gave it (`breeze
    /// status` shows the same number), when the content says one. What support asks for.
    public var releaseSequence: Int?
    /// The root document came back `304 Not Modified`.
    public var notModified: Bool
    /// Files downloaded (a bundle's files, the package, a repository's bundles).
    public var filesDownloaded: Int
    /// Body bytes downloaded, manifests included.
    public var bytesDownloaded: Int64
    /// Files carried over from the previous version without a download.
    public var filesReused: Int
    /// Files the live version had and the new one does not.
    public var filesRemoved: Int
    /// Entries of the bundle's manifests whose conditions (platform, versions, locale, device,
    /// scale) this device does not meet: files for other devices, not installed here (a child
    /// manifest left out counts as one). Set by an update that installs a version.
    public var filesForOtherDevices = 0
    /// HTTP requests sent, retries included.
    public var requests: Int
    /// Body bytes received and thrown away: attempts cut and not resumable, bodies that failed
    /// their check. Zero on a clean network.
    public var bytesWasted: Int64 = 0
    /// Bytes of changed large files not downloaded because their unchanged chunks were
    /// copied from the previous version (`ChunkIndex`).
    public var bytesSaved: Int64 = 0
    /// Files of ``filesDownloaded`` taken from the root manifest's pack of small files (written by
    /// `breeze generate --pack`) instead of a request each. Fewer than the pack offered means
    /// the rest failed their check or never arrived, and were fetched alone.
    public var filesFromPack = 0
    /// Why the pack did not bring every file it was asked for (they were fetched alone), or
    /// `nil`: the error that stopped it (a `404`, a pack cut short, a path out of the bundle),
    /// or how many of its files were missing or failed their digest. Worth a log line: a pack
    /// that never works costs a request and its bytes on every first install.
    public var packProblem: String?
    /// Files ``BundleStore/verify()`` found missing or changed in the live version that this
    /// update downloaded again. With nothing else downloaded or removed, the update was a
    /// repair: the same release, whole again, as a new version.
    public var filesRepaired = 0
    /// Wall-clock time the update took.
    public var seconds: Double
    /// The paths downloaded, in the order they completed: made when read (a sync of 100,000
    /// files holds them as 400 KB of positions in its plan's paths, not 9.6 MB of strings).
    public var downloaded: [String] {
        get { downloadedPaths.strings }
        set { downloadedPaths = PathsByPosition(newValue) }
    }
    /// The paths downloaded, as ``downloaded`` is made from.
    var downloadedPaths: PathsByPosition
    /// The paths no longer present.
    public var removed: [String]
    /// The keys a newly installed version's root manifest (a repository's: its index) says
    /// signed it, when the app pinned none: signatures that were **not** checked, so whoever can
    /// change the files on the server could have changed this content too. Pin the publisher's
    /// public key (``SyncConfiguration/trustedKeys`` or ``SyncConfiguration/keyRotation``) to
    /// have them checked and content anyone else signed refused; ``oneLine`` says so until then.
    /// Empty when keys were pinned, when nothing was signed, and when nothing new was installed.
    /// As the server wrote them: not necessarily keys.
    public var unverifiedSigners: [String] = []
    /// A package update's details (``PackageUpdater``).
    package var package: PackageUpdater.Result?
    /// A repository update's details (``Repository``).
    package var repository: Repository.Result?

    // `downloadedPaths` is written as "downloaded", as the list of strings it replaced was.
    enum CodingKeys: String, CodingKey {
        case outcome, version, releaseSequence, notModified, filesDownloaded, bytesDownloaded, filesReused,
            filesRemoved, requests
        case filesForOtherDevices, bytesWasted, bytesSaved, filesFromPack, packProblem, filesRepaired, seconds, removed
        case unverifiedSigners, package, repository
        case downloadedPaths = "downloaded"
    }

    /// A sync that installed nothing (yet): the live version stays, its files reused.
    static func nothingInstalled(_ outcome: Outcome, version: Int?, notModified: Bool, reused: Int) -> SyncSummary {
        SyncSummary(
            outcome: outcome,
            version: version,
            notModified: notModified,
            filesDownloaded: 0,
            bytesDownloaded: 0,
            filesReused: reused,
            filesRemoved: 0,
            requests: 0,
            seconds: 0,
            downloadedPaths: PathsByPosition(),
            removed: []
        )
    }

    /// One line for a terminal or a log: what moved and what it cost, and whether signatures
    /// went unchecked (``unverifiedSigners``).
    public var oneLine: String {
        movement + (unverifiedNote(opening: true).map { " " + $0 } ?? "")
    }

    /// ``unverifiedSigners`` as a sentence, starting one (`opening`) or following a colon; `nil`
    /// when there are none. Names only signers that are keys: the names are the server's, and
    /// reach terminals and logs.
    package func unverifiedNote(opening: Bool) -> String? {
        guard !unverifiedSigners.isEmpty else { return nil }
        let keys = unverifiedSigners.filter { (try? TrustedKey(base64: $0)) != nil }
        let more = unverifiedSigners.count > 1 ? " and \(unverifiedSigners.count - 1) more" : ""
        let by = keys.first.map { " (by \($0)\(more))" } ?? ""
        let signed = repository == nil ? "this version" : "this repository's index"
        let subject = opening ? signed.prefix(1).uppercased() + signed.dropFirst() : signed
        return "\(subject) is signed\(by), but no key is pinned, so no signature was checked."
    }

    /// ``oneLine`` without the note on unchecked signatures: what moved and what it cost.
    package var movement: String {
        let liveRelease = releaseSequence.map { " Live: release \($0)." } ?? ""
        if let package { return package.oneLine(requests: requests, bytesWasted: bytesWasted) + liveRelease }
        if let repository { return repository.oneLine(requests: requests, bytesWasted: bytesWasted) + liveRelease }
        let time = seconds.fixedPoint(2) + "s" + wastedNote(bytesWasted)
        switch outcome {
        case .alreadyCurrent:
            let how = notModified ? "304 Not Modified" : "no file changed"
            let release = releaseSequence.map { " at release \($0)" } ?? ""
            return "Already current\(release) (\(how)); \(requests) request\(requests == 1 ? "" : "s"), \(time)."
        case .keptAfterRollback:
            return
                "Kept version \(version ?? 0): the server still offers the content rolled back from; \(requests) request\(requests == 1 ? "" : "s"), \(time)."
        case .updated:
            let saved = bytesSaved > 0 ? ", \(ByteCount(bytesSaved)) of unchanged chunks kept" : ""
            let packed = filesFromPack > 0 ? ", \(filesFromPack) from the pack" : ""
            let elsewhere = filesForOtherDevices > 0 ? ", \(filesForOtherDevices) for other devices" : ""
            let packFailed = packProblem.map {
                " The pack failed, and what it did not bring came one file at a time: \($0)"
            }
            let damaged = "\(filesRepaired) damaged file\(filesRepaired == 1 ? "" : "s")"
            let release = releaseSequence.map { " (release \($0))" } ?? ""
            let head =
                filesRepaired == 0
                ? "Updated to version \(version ?? 0)\(release)"
                : filesRepaired == filesDownloaded && filesRemoved == 0
                    ? "Repaired \(damaged) as version \(version ?? 0)\(release)"
                    : "Updated to version \(version ?? 0)\(release), repairing \(damaged)"
            return
                "\(head): \(filesDownloaded) downloaded (\(ByteCount(bytesDownloaded))\(saved)\(packed)), "
                + "\(filesReused) reused, \(filesRemoved) removed\(elsewhere); \(requests) request\(requests == 1 ? "" : "s"), \(time)."
                + (packFailed ?? "")
        }
    }
}

extension SyncSummary {
    /// Reads a summary written by this or an earlier FreshAir (an app may keep the last one
    /// across an app update): every field added after the first release (files for other
    /// devices, bytes wasted and saved, the pack's, repairs, unchecked signers, a mode's
    /// details) takes its default when absent.
    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        outcome = try values.decode(Outcome.self, forKey: .outcome)
        version = try values.decodeIfPresent(Int.self, forKey: .version)
        releaseSequence = try values.decodeIfPresent(Int.self, forKey: .releaseSequence)
        notModified = try values.decode(Bool.self, forKey: .notModified)
        filesDownloaded = try values.decode(Int.self, forKey: .filesDownloaded)
        bytesDownloaded = try values.decode(Int64.self, forKey: .bytesDownloaded)
        filesReused = try values.decode(Int.self, forKey: .filesReused)
        filesRemoved = try values.decode(Int.self, forKey: .filesRemoved)
        requests = try values.decode(Int.self, forKey: .requests)
        seconds = try values.decode(Double.self, forKey: .seconds)
        downloadedPaths = try values.decode(PathsByPosition.self, forKey: .downloadedPaths)
        removed = try values.decode([String].self, forKey: .removed)
        filesForOtherDevices = try values.decodeIfPresent(Int.self, forKey: .filesForOtherDevices) ?? 0
        bytesWasted = try values.decodeIfPresent(Int64.self, forKey: .bytesWasted) ?? 0
        bytesSaved = try values.decodeIfPresent(Int64.self, forKey: .bytesSaved) ?? 0
        filesFromPack = try values.decodeIfPresent(Int.self, forKey: .filesFromPack) ?? 0
        packProblem = try values.decodeIfPresent(String.self, forKey: .packProblem)
        filesRepaired = try values.decodeIfPresent(Int.self, forKey: .filesRepaired) ?? 0
        unverifiedSigners = try values.decodeIfPresent([String].self, forKey: .unverifiedSigners) ?? []
        package = try values.decodeIfPresent(PackageUpdater.Result.self, forKey: .package)
        repository = try values.decodeIfPresent(Repository.Result.self, forKey: .repository)
    }
}

extension SyncSummary {
    /// A package update in the terms of every mode: the package is the one file. The run's
    /// cost (requests, bytes wasted, seconds) is filled in by `DeliveryRun`.
    init(_ result: PackageUpdater.Result, package name: String) {
        let installed = result.outcome == .downloaded || result.installedBundled
        self.init(
            outcome: result.outcome == .keptAfterRollback ? .keptAfterRollback : installed ? .updated : .alreadyCurrent,
            version: result.version,
            notModified: result.outcome == .notModified,
            filesDownloaded: result.outcome == .downloaded ? 1 : 0,
            bytesDownloaded: result.bytesDownloaded,
            filesReused: installed ? 0 : 1,
            filesRemoved: 0,
            requests: 0,
            seconds: 0,
            downloadedPaths: PathsByPosition(result.outcome == .downloaded ? [name] : []),
            removed: [],
            package: result
        )
        bytesSaved = result.bytesSaved
    }

    /// A repository update in the terms of every mode: its bundles are the files. The run's
    /// cost is filled in by `DeliveryRun`.
    init(_ result: Repository.Result) {
        let changed = !result.updated.isEmpty || !result.removed.isEmpty
        self.init(
            outcome: changed ? .updated : result.keptAfterRollback.isEmpty ? .alreadyCurrent : .keptAfterRollback,
            version: nil,
            notModified: result.indexNotModified,
            filesDownloaded: result.updated.count,
            bytesDownloaded: result.bytesDownloaded,
            filesReused: result.unchanged.count + result.keptAfterRollback.count,
            filesRemoved: result.removed.count,
            requests: 0,
            seconds: 0,
            downloadedPaths: PathsByPosition(result.updated.keys.sorted()),
            removed: result.removed,
            repository: result
        )
    }
}
