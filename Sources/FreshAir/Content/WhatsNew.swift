public import Foundation

/// A feature to show on a "what's new" screen, with its localized texts and image.
public struct Feature: Sendable, Hashable, Codable {
    /// The key in `release_notes.json`.
    public var key: String
    /// The release that introduced it.
    public var version: String
    /// `<key>.title`, or `nil` when no table has it.
    public var title: String?
    /// `<key>.description`, or `nil` when no table has it.
    public var description: String?
    /// The image named after the key, best variant for the display.
    public var image: URL?
}

extension ContentBundle {
    /// The features of releases after `from` up to `to` that apply in `environment`, with texts
    /// from `table` (default `Feature`, falling back to `Localizable`) and images.
    ///
    /// Empty on a first launch (`from == nil`) or when nothing applies: show no screen then.
    public func whatsNew(
        from: Version?,
        to: Version,
        environment: ConditionEnvironment,
        table: String = "Feature"
    ) throws -> [Feature] {
        guard let notes = try releaseNotes() else { return [] }
        return notes.featuresNew(from: from, to: to, environment: environment).map { feature in
            Feature(
                key: feature.key,
                version: feature.version.description,
                title: text("\(feature.key).title", table: table),
                description: text("\(feature.key).description", table: table),
                image: imageURL(named: feature.key)
            )
        }
    }

    /// What's new since the version this user last saw, remembered in `store`; records
    /// `current` as seen. Empty on the very first launch.
    package func whatsNewSinceLastSeen(
        current: Version,
        environment: ConditionEnvironment,
        store: any UpdatePromptStore
    ) throws -> [Feature] {
        var state = store.load()
        let lastSeen = state.lastSeenVersion.flatMap(Version.init)
        let features = try whatsNew(from: lastSeen, to: current, environment: environment)
        if lastSeen.map({ $0 < current }) ?? true {
            state.lastSeenVersion = current.description
            store.save(state)
        }
        return features
    }

    private func text(_ key: String, table: String) -> String? {
        lookUpString(forKey: key, table: table) ?? lookUpString(forKey: key, table: "Localizable")
    }
}
