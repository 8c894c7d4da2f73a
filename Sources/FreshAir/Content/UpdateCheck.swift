public import Foundation
import Synchronization

/// Where the running version stands against the release notes.
public enum UpdateStatus: Sendable, Hashable {
    /// The running version is the newest that applies to this device.
    case upToDate
    /// A newer release that applies to this device exists.
    case available(Version, url: URL?)
    /// The running version is below `minimumVersion`: the app must update.
    case required(minimum: Version, url: URL?)
}

extension ReleaseNotes {
    /// `required` when the running version is below ``minimumVersion`` (whatever else holds);
    /// `available` when a later release applies to this device; else `upToDate`.
    public func updateStatus(current: Version, environment: ConditionEnvironment) -> UpdateStatus {
        if let minimumVersion, current < minimumVersion { return .required(minimum: minimumVersion, url: upgradeURL) }
        if let latest = releases(for: environment).last?.version, latest > current {
            return .available(latest, url: upgradeURL)
        }
        return .upToDate
    }
}

/// What the app remembers between prompts.
package struct UpdatePromptState: Sendable, Hashable, Codable {
    /// The user chose "skip this version" for this one.
    package var skippedVersion: String?
    /// When a prompt was last shown.
    package var lastPrompted: Date?
    /// The last version whose "what's new" the user saw.
    package var lastSeenVersion: String?

    /// A state; all empty by default.
    package init(skippedVersion: String? = nil, lastPrompted: Date? = nil, lastSeenVersion: String? = nil) {
        self.skippedVersion = skippedVersion
        self.lastPrompted = lastPrompted
        self.lastSeenVersion = lastSeenVersion
    }
}

/// Keeps `UpdatePromptState`; replace it to keep the state in your own storage.
package protocol UpdatePromptStore: Sendable {
    /// The state last saved, or an empty one.
    func load() -> UpdatePromptState
    /// Keeps `state` for the next ``load()``.
    func save(_ state: UpdatePromptState)
}

/// A JSON file.
package struct FileUpdatePromptStore: UpdatePromptStore {
    /// The JSON file.
    package let url: URL
    /// Keeps the state in the JSON file at `url`.
    package init(url: URL) { self.url = url }

    /// The state in the file, or an empty one when it is missing or unreadable.
    package func load() -> UpdatePromptState {
        (try? JSONDecoder().decode(UpdatePromptState.self, from: Data(contentsOf: url))) ?? UpdatePromptState()
    }

    /// Writes `state` to the file, atomically.
    package func save(_ state: UpdatePromptState) {
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? JSONEncoder().encode(state).write(to: url, options: .atomic)
    }
}

/// In memory, for tests and previews.
package final class InMemoryUpdatePromptStore: UpdatePromptStore {
    private let state = Mutex(UpdatePromptState())
    /// Starts with `initial`.
    package init(_ initial: UpdatePromptState = UpdatePromptState()) { state.withLock { $0 = initial } }
    /// The state held.
    package func load() -> UpdatePromptState { state.withLock { $0 } }
    /// Replaces the state held.
    package func save(_ newState: UpdatePromptState) { state.withLock { $0 = newState } }
}

/// The nag rules: when to show an "update available" prompt.
///
/// A required update is always shown. An available one is shown unless the user skipped that
/// version, or was prompted less than ``minimumInterval`` ago.
package struct UpdatePromptPolicy: Sendable {
    /// The least time between two prompts for an available update (3 days by default).
    package var minimumInterval: TimeInterval
    /// Where skipped versions and prompt dates are kept.
    package var store: any UpdatePromptStore

    /// A policy keeping its state in `store`.
    package init(minimumInterval: TimeInterval = 3 * 86_400, store: any UpdatePromptStore) {
        self.minimumInterval = minimumInterval
        self.store = store
    }

    /// Whether to show a prompt for `status` now.
    package func shouldPrompt(for status: UpdateStatus, now: Date = SyncEnvironment.system.now()) -> Bool {
        switch status {
        case .upToDate: return false
        case .required: return true
        case .available(let version, _):
            let state = store.load()
            if let skipped = state.skippedVersion.flatMap(Version.init), skipped == version { return false }
            if let last = state.lastPrompted, now.timeIntervalSince(last) < minimumInterval { return false }
            return true
        }
    }

    /// Call when the prompt was shown.
    package func didPrompt(at now: Date = SyncEnvironment.system.now()) {
        var state = store.load()
        state.lastPrompted = now
        store.save(state)
    }

    /// Call when the user chose "skip this version".
    package func skip(_ version: Version) {
        var state = store.load()
        state.skippedVersion = version.description
        store.save(state)
    }
}
