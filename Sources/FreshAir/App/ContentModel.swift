import Foundation
public import Observation

/// The state of an app's content, for SwiftUI: what a sync is doing, what it last did, the
/// content to read, "what's new" for this upgrade and whether the app must be updated.
///
/// ```swift
/// @main struct MyApp: App {
///     @State private var content = ContentModel(FreshAirContent(remote: contentURL))
///     var body: some Scene {
///         WindowGroup {
///             HomeView(content: content)
///                 .task { await content.refresh() }
///         }
///     }
/// }
/// ```
///
/// Every property changes on the main actor. ``refresh()`` never throws: a failure becomes
/// ``Phase/failed(_:liveVersion:)``, and the version that was live stays live and readable.
@MainActor
@Observable
public final class ContentModel {
    /// What the content is doing now.
    public enum Phase: Sendable {
        /// No sync has run yet.
        case idle
        /// Asking the server whether anything changed.
        case checking
        /// Downloading: bytes received so far and, when the server declared them, in all.
        case downloading(bytesDone: Int64, bytesTotal: Int64?)
        /// The live version is the server's newest (its number; `nil` for an empty store, and
        /// always for a ``RepositoryModel``, whose bundles each have their own).
        case current(version: Int?)
        /// The last sync failed with `error`; `liveVersion` is still live and readable.
        case failed(any Error, liveVersion: Int?)

        /// Whether a sync is running.
        public var isBusy: Bool {
            switch self {
            case .checking, .downloading: true
            case .idle, .current, .failed: false
            }
        }
    }

    /// The content this model keeps current.
    public let source: FreshAirContent
    /// What the content is doing now.
    public private(set) var phase: Phase = .idle
    /// What the last successful sync did.
    public private(set) var lastSummary: SyncSummary?
    /// The live content; a new value after each update, so views that read it redraw.
    public private(set) var live: ContentBundle
    /// The features released since the app version this user last saw, from the content's
    /// release notes; empty on a first launch. They stay new, across launches, until the app
    /// calls ``dismissWhatsNew()``: a background launch does not use them up unseen.
    public private(set) var whatsNew: [Feature] = []
    /// Whether a newer app is available or required, from the content's release notes;
    /// `nil` when the content has none or the app's version is unknown.
    public private(set) var updateStatus: UpdateStatus?
    /// Whether to ask the user to update the app now: always when ``updateStatus`` is
    /// `required`; when an update is only available, unless the user skipped that version or
    /// was asked within the last three days. Observable: it turns false once the app calls
    /// ``updatePromptShown()`` or ``skipAvailableUpdate()``, and is worked out again at each
    /// ``refresh()``.
    public private(set) var shouldPromptForUpdate = false

    private let prompts: any UpdatePromptStore

    /// Keeps `source` current; what the user has seen and when they were last asked to update
    /// are remembered in a file in its store's folder.
    public convenience init(_ source: FreshAirContent) {
        self.init(
            source,
            prompts: FileUpdatePromptStore(url: source.store.stateFolder.appendingPathComponent("prompts.json"))
        )
    }

    /// The same, remembering in `prompts`.
    package init(_ source: FreshAirContent, prompts: any UpdatePromptStore) {
        self.source = source
        self.live = source.live
        self.prompts = prompts
        readReleaseNotes()
    }

    /// Runs one sync (the bundled copy first, on a first launch) and updates every property as
    /// it goes. A second call while one runs returns at once.
    public func refresh() async {
        guard !phase.isBusy else { return }
        phase = .checking
        switch await observedUpdate(of: source, phase: { phase = $0 }) {
        case .success(let summary):
            lastSummary = summary
            phase = .current(version: summary.version ?? source.store.liveVersionID)
        case .failure(let error):
            phase = .failed(error, liveVersion: source.store.liveVersionID)
        }
        if source.store.liveVersionID != nil {
            live = source.live
            readReleaseNotes()
        }
    }

    /// Call once the app has shown ``whatsNew``: records this app version's features as seen,
    /// so they are not shown again, and clears ``whatsNew``.
    public func dismissWhatsNew() {
        if let appVersion { ContentBundle.markWhatsNewSeen(current: appVersion, store: prompts) }
        whatsNew = []
    }

    /// Records that the app asked, so an available update is not asked about again for three
    /// days; ``shouldPromptForUpdate`` turns false unless the update is required.
    public func updatePromptShown() {
        promptPolicy.didPrompt(at: source.configuration.environment.now())
        decidePrompt()
    }

    /// The user chose to skip the available version: it is not asked about again (a later one
    /// is); ``shouldPromptForUpdate`` turns false.
    public func skipAvailableUpdate() {
        if case .available(let version, _) = updateStatus { promptPolicy.skip(version) }
        decidePrompt()
    }

    private var promptPolicy: UpdatePromptPolicy { UpdatePromptPolicy(store: prompts) }

    private var appVersion: Version? { source.environment["appVersion"]?.text.flatMap(Version.init) }

    private func decidePrompt() {
        shouldPromptForUpdate =
            updateStatus.map { promptPolicy.shouldPrompt(for: $0, now: source.configuration.environment.now()) }
            ?? false
    }

    /// The phase an event moves to, or `nil` when it changes none: a decision with no effects,
    /// so it is tested alone.
    nonisolated static func phase(after event: SyncEvent) -> Phase? {
        switch event {
        case .checking: .checking
        case .progress(let progress):
            .downloading(bytesDone: progress.bytesReceived, bytesTotal: progress.bytesExpected)
        case .planned(let plan) where plan.filesToDownload > 0:
            .downloading(bytesDone: 0, bytesTotal: plan.bytesToDownload)
        case .notModified, .planned, .downloaded, .activated, .finished: nil
        }
    }

    /// What's new and the update status, from the live release notes. A damaged file leaves
    /// both as they were: the content is still readable without them.
    private func readReleaseNotes() {
        guard let appVersion, let notes = try? live.releaseNotes() else { return }
        updateStatus = notes.updateStatus(current: appVersion, environment: source.environment)
        decidePrompt()
        let features =
            (try? live.whatsNewSinceLastSeen(current: appVersion, environment: source.environment, store: prompts))
            ?? []
        if !features.isEmpty { whatsNew = features }
    }
}
