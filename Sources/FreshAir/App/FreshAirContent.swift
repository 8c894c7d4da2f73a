public import Foundation

/// The content an app keeps current from a static host, in one value: where it lives, the
/// device it is for, the copy the app ships with, and the sync. The content is a bundle folder
/// (`…/App.freshair/`) or a single package (`…/content.tgz`, `.tar.gz`, `.tar`, `.gz` or `.zip`).
///
/// ```swift
/// let content = FreshAirContent(remote: URL(string: "https://cdn.example.com/App.freshair/")!)
/// try await content.run()  // the bundled copy first, on a first launch; then the server's
/// let title = content.live.localizedString(forKey: "welcome.title", table: "Feature")
/// let hero = content.live.imageURL(named: "hero")  // @3x, else @2x…, ~ipad on an iPad
/// ```
///
/// Everything has a default that is true on the device:
/// - the content is in `Application Support/FreshAir/<name>` (`<name>` is the remote folder's,
///   `App` for `…/App.freshair/`, `content` for `…/content.tgz`), kept across launches and app
///   updates and excluded from backups, since it can be downloaded again; on tvOS, which keeps
///   no local storage for certain, it is in `Caches`. The little that must outlive a purge (install ID,
///   anti-rollback marks, rotated keys, what was rolled back from) is in
///   `Application Support/FreshAir/<name>.state` (``BundleStore/stateFolder``), and on tvOS
///   also in the app's `UserDefaults`, which tvOS keeps, put back after a purge. On iOS and
///   visionOS (not Mac Catalyst, on a Mac volume) both folders have the Data Protection class
///   `completeUntilFirstUserAuthentication`: a background sync works while the device is
///   locked, but not before its first unlock after a restart;
/// - the environment is ``ConditionEnvironment/current(appVersion:)``: platform, system and
///   app versions, the screen's scale, the device class and the app's own localization;
/// - the app's copy is `<name>.freshair` in `Bundle.main`, installed through the same checks
///   as the server's (signatures included) when nothing is live yet, so there is content
///   before the network answers. For a package it is the package's own file name
///   (`content.tgz`), installed when nothing is live or when its `.meta` sidecar
///   (`{"Last-Modified": "…"}`) dates it after the live version, as ``PackageUpdater`` does;
///   a bundled package is trusted as part of the app, signed or not.
///
/// A `FreshAirContent` is a value: make one at launch (on the main actor, where the screen can
/// be read) and pass it to a ``ContentModel`` for SwiftUI, to a `BGAppRefreshTask`, or to a
/// ``SyncSchedule``.
public struct FreshAirContent: ContentUpdater {
    /// The bundle folder on the server (`…/App.freshair/`), or a package (`…/content.tgz`).
    public let remote: URL
    /// Where versions are kept; its ``BundleStore/liveLink`` always leads to the live one.
    public let store: BundleStore
    /// The app's own copy: a `.freshair` folder, or for a package the package file. `nil` when
    /// the app ships none.
    public let bundled: URL?
    /// What conditions are evaluated against and lookups use.
    public var environment: ConditionEnvironment
    /// Retries, limits, timeouts and the keys content must be signed with.
    public var configuration: SyncConfiguration
    /// Byte-identical copies of ``remote`` (the same name and layout, so the same signed
    /// documents), tried in order when it cannot be reached, answers an error, or serves what
    /// is refused; the one that answered last is tried first the next time. Empty by default.
    /// With keys pinned every mirror is untrusted: none can take the device below a release
    /// it accepted from another.
    public var mirrors: [URL] = []
    private let transport: (any HTTPTransport)?

    /// - Parameters:
    ///   - remote: the bundle folder on the server (`…/App.freshair/`) or its `manifest.json`;
    ///     or a package's URL (`…/content.tgz`), kept current as ``PackageUpdater`` keeps one.
    ///   - folder: where the store lives, its state included; by default as above. A folder in
    ///     an App Group container lets extensions share the store.
    ///   - bundle: where the app's own copy is, as `<name>.freshair` (a folder reference in
    ///     Xcode's Copy Bundle Resources), or for a package as a file of the remote's name
    ///     (`content.tgz`, its `.meta` beside it); by default `Bundle.main`. `nil` for no
    ///     bundled copy.
    ///   - environment: by default ``ConditionEnvironment/current(appVersion:)``.
    ///   - configuration: retries, limits and trusted keys. With keys pinned, a bundled
    ///     bundle must be signed as well (a bundled package is trusted as part of the app).
    ///   - transport: by default a `URLSession` of each sync's own; pass one to share it.
    public init(
        remote: URL,
        folder: URL? = nil,
        bundledIn bundle: Bundle? = .main,
        environment: ConditionEnvironment = .current(),
        configuration: SyncConfiguration = SyncConfiguration(),
        transport: Transport? = nil
    ) {
        let name = Self.name(of: remote)
        self.remote = remote
        if let folder {
            self.store = BundleStore(root: folder)
        } else {
            let folders = StoragePlan.current.folders(name: name, base: StoragePlan.systemFolder)
            self.store = BundleStore(root: folders.content, stateFolder: folders.state)
        }
        self.bundled =
            Self.isPackage(remote)
            ? bundle?.url(forResource: remote.lastPathComponent, withExtension: nil)
            : bundle?.url(forResource: name, withExtension: "freshair")
        self.environment = environment
        self.configuration = configuration
        self.transport = transport?.base
    }

    /// The live content, looked up as `Bundle` does, for this environment. Lookups follow the
    /// live link, so they see each new version as it goes live; a value caches the string
    /// tables and folder listings it read (lookups from a view's `body` touch no disk after
    /// the first), so take a new one after an update, as ``ContentModel/live`` does.
    public var live: ContentBundle {
        let development = MainBundle.info("CFBundleDevelopmentRegion")
        return ContentBundle(
            root: store.liveLink,
            environment: environment,
            developmentLocalization: development ?? "en"
        )
    }

    /// Installs the bundled copy when nothing is live yet, then brings the content up to the
    /// server's, calling `report` with each event.
    ///
    /// The bundled copy needs no network, so there is content even when the server cannot be
    /// reached; the server's version then reuses every file the two share. When the bundled
    /// copy went live but the server could not be checked, this throws
    /// ``FreshAirError/Code/bundledCopyOnly``, whose underlying error says why. A bundled copy
    /// that fails its checks is passed over for the server's content; call
    /// ``installBundledCopy(reporting:)`` in a test to see why it fails.
    ///
    /// The store's folders are created first, with the platform's Data Protection class and
    /// backup exclusion (see above).
    @discardableResult
    public func run(reporting report: @escaping @Sendable (SyncEvent) -> Void) async throws -> SyncSummary {
        try await BlockingPool.run { [store] in try StoragePlan.current.prepare(store) }
        if StoragePlan.current.mirrorsStateInDefaults {
            try await BlockingPool.run { [store] in try StateMirror(store: store).restore() }
        }
        defer { if StoragePlan.current.mirrorsStateInDefaults { StateMirror(store: store).save() } }
        // A package's updater applies the same rule (BundledFirst) within its own lock.
        if Self.isPackage(remote) {
            return try await failover.run { try await package(from: $0).run(reporting: report) }
        }
        let environment = await plannedEnvironment()
        return try await BundledFirst.run {
            try await installBundledCopy(for: environment, reporting: report)
        } thenServer: {
            try await failover.run { try await sync(from: $0, for: environment).run(reporting: report) }
        }.result
    }

    /// Installs the bundled copy if there is one and nothing is live yet, without the network.
    /// Returns whether it did. Call it first thing at launch to have content before anything
    /// else; ``run(reporting:)`` calls it too.
    @discardableResult
    public func installBundledCopy(
        reporting report: @escaping @Sendable (SyncEvent) -> Void = { _ in }
    ) async throws -> Bool {
        if let package { return try await package.installBundledCopy(reporting: report) }
        return try await installBundledCopy(for: await plannedEnvironment(), reporting: report)
    }

    private func installBundledCopy(
        for environment: ConditionEnvironment,
        reporting report: @escaping @Sendable (SyncEvent) -> Void
    ) async throws -> Bool {
        guard let bundled, store.liveVersionID == nil else { return false }
        let summary = try await sync(from: bundled, for: environment).run(reporting: report)
        return summary.outcome == .updated
    }

    /// ``environment`` with what it only assumed (the scale off the main thread, the languages
    /// in an extension) taken from the last launch that read them, and what it read kept for
    /// the next: a background sync plans for the device the user sees.
    private func plannedEnvironment() async -> ConditionEnvironment {
        let planned = try? await BlockingPool.run { [environment, store] in
            let folder = store.stateFolder
            let (planned, remember) = RememberedTraits.reconcile(
                environment,
                remembered: RememberedTraits.load(from: folder)
            )
            if let remember {
                try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                remember.save(in: folder)
            }
            return planned
        }
        return planned ?? environment
    }

    /// The sync of ``remote`` for the environment a run would plan with (``SystemDownloads``
    /// plans from it).
    func bundleSync() async -> BundleSync {
        sync(from: remote, for: await plannedEnvironment())
    }

    /// ``remote`` and the ``mirrors``, the one that answered last first.
    private var failover: SourceFailover {
        SourceFailover(
            sources: [remote] + mirrors,
            memory: store.stateFolder.appendingPathComponent("source.json").path
        )
    }

    /// One sync of this store from `source`, the server's bundle or the app's copy.
    private func sync(from source: URL, for environment: ConditionEnvironment) -> BundleSync {
        BundleSync(
            remote: source,
            store: store,
            environment: environment,
            transport: source.isFileURL ? nil : transport,
            configuration: configuration
        )
    }

    /// The package's updater when ``remote`` names a package, sharing this value's store,
    /// bundled copy, transport and configuration.
    private var package: PackageUpdater? {
        guard Self.isPackage(remote) else { return nil }
        return package(from: remote)
    }

    /// The package's updater from `source` (``remote`` or a mirror's copy of it).
    private func package(from source: URL) -> PackageUpdater {
        PackageUpdater(
            remote: source,
            store: store,
            bundledPackage: bundled,
            transport: transport,
            configuration: configuration
        )
    }

    /// `…/content.tgz` (any archive ``PackageUpdater`` takes), not a folder's URL.
    static func isPackage(_ remote: URL) -> Bool {
        !remote.hasDirectoryPath && ArchiveFormat(fileName: remote.lastPathComponent) != nil
    }

    /// `App` for `…/App.freshair/` or `…/App.freshair/manifest.json`; `content` for
    /// `…/content.tgz` or `…/content.tar.gz`.
    static func name(of remote: URL) -> String {
        var folder = remote
        if folder.lastPathComponent == "manifest.json" { folder.deleteLastPathComponent() }
        var name = folder.deletingPathExtension().lastPathComponent
        if isPackage(remote), name.lowercased().hasSuffix(".tar") { name.removeLast(4) }
        return name.isEmpty || name == "/" ? "Content" : name
    }

}
