import Foundation
import Synchronization

/// Where the running version stands against the release notes.
public enum UpdateStatus: Sendable, Hashable {
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
public struct UpdatePromptState: Sendable, Hashable, Codable {
    /// The user chose "skip this version" for this one.
    public var skippedVersion: String?
    public var lastPrompted: Date?
    /// The last version whose "what's new" the user saw.
    public var lastSeenVersion: String?

    public init(skippedVersion: String? = nil, lastPrompted: Date? = nil, lastSeenVersion: String? = nil) {
        self.skippedVersion = skippedVersion
        self.lastPrompted = lastPrompted
        self.lastSeenVersion = lastSeenVersion
    }
}

/// Keeps ``UpdatePromptState``; replace it to keep the state in your own storage.
public protocol UpdatePromptStore: Sendable {
    func load() -> UpdatePromptState
    func save(_ state: UpdatePromptState)
}

/// A JSON file.
public struct FileUpdatePromptStore: UpdatePromptStore {
    public let url: URL
    public init(url: URL) { self.url = url }

    public func load() -> UpdatePromptState {
        (try? JSONDecoder().decode(UpdatePromptState.self, from: Data(contentsOf: url))) ?? UpdatePromptState()
    }

    public func save(_ state: UpdatePromptState) {
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? JSONEncoder().encode(state).write(to: url, options: .atomic)
    }
}

/// In memory, for tests and previews.
public final class InMemoryUpdatePromptStore: UpdatePromptStore {
    private let state = Mutex(UpdatePromptState())
    public init(_ initial: UpdatePromptState = UpdatePromptState()) { state.withLock { $0 = initial } }
    public func load() -> UpdatePromptState { state.withLock { $0 } }
    public func save(_ newState: UpdatePromptState) { state.withLock { $0 = newState } }
}

/// The nag rules: when to show an "update available" prompt.
///
/// A required update is always shown. An available one is shown unless the user skipped that
/// version, or was prompted less than ``minimumInterval`` ago.
public struct UpdatePromptPolicy: Sendable {
    public var minimumInterval: TimeInterval
    public var store: any UpdatePromptStore

    public init(minimumInterval: TimeInterval = 3 * 86_400, store: any UpdatePromptStore) {
        self.minimumInterval = minimumInterval
        self.store = store
    }

    public func shouldPrompt(for status: UpdateStatus, now: Date = Date()) -> Bool {
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
    public func didPrompt(at now: Date = Date()) {
        var state = store.load()
        state.lastPrompted = now
        store.save(state)
    }

    /// Call when the user chose "skip this version".
    public func skip(_ version: Version) {
        var state = store.load()
        state.skippedVersion = version.description
        store.save(state)
    }
}
