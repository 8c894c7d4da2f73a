public import Foundation
public import Observation

/// The state of a ``Repository``, for SwiftUI: what an update is doing, what it last did, and
/// which bundles are installed at which version, as ``ContentModel`` is for one bundle.
///
/// ```swift
/// @State private var levels = RepositoryModel(Repository(source: levelsURL, id: "com.adm.levels"))
///
/// List(levels.bundles.keys.sorted(), id: \.self) { name in
///     NavigationLink(name) { LevelView(folder: levels.folder(ofBundle: name)) }
/// }
/// .task { await levels.refresh() }
/// ```
///
/// Every property changes on the main actor. ``refresh()`` never throws: a failure becomes
/// ``ContentModel/Phase/failed(_:liveVersion:)``, and the bundles installed stay installed and
/// readable. A repository has no version of its own: its phases carry `nil` where a bundle's
/// carry its version.
@MainActor
@Observable
public final class RepositoryModel {
    /// The repository this model keeps current.
    public let repository: Repository
    /// What the repository is doing now.
    public private(set) var phase: ContentModel.Phase = .idle
    /// What the last successful update did.
    public private(set) var lastSummary: SyncSummary?
    /// The bundles installed, by name, with the version each is at
    /// (``Repository/installedBundles``); a new value after each update, so views that read it
    /// redraw.
    public private(set) var bundles: [String: Int]

    /// Keeps `repository` current. Reads which bundles are installed now: each one's record,
    /// from disk.
    public init(_ repository: Repository) {
        self.repository = repository
        self.bundles = repository.installedBundles
    }

    /// Runs one update and updates every property as it goes. A second call while one runs
    /// returns at once.
    public func refresh() async {
        guard !phase.isBusy else { return }
        phase = .checking
        let result = await observedUpdate(of: repository, phase: { phase = $0 })
        let repository = repository
        bundles = await Task.detached { repository.installedBundles }.value
        switch result {
        case .success(let summary):
            lastSummary = summary
            phase = .current(version: nil)
        case .failure(let error):
            phase = .failed(error, liveVersion: nil)
        }
    }

    /// The live folder of bundle `name`, or `nil` when it is not installed. The folder stays
    /// the same version while it is read, even when an update installs a newer one.
    public func folder(ofBundle name: String) -> URL? {
        repository.bundle(named: name)
    }
}
