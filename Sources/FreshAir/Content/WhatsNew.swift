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
    /// The scale ``image`` was drawn for (`@3x`: 3), to size it in points; `nil` with no image.
    public var imageScale: Double?
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
            let art = image(named: feature.key)
            return Feature(
                key: feature.key,
                version: feature.version.description,
                title: text("\(feature.key).title", table: table),
                description: text("\(feature.key).description", table: table),
                image: art?.url,
                imageScale: art?.scale
            )
        }
    }

    /// What's new since the version this user last saw, remembered in `store`. Empty on the
    /// very first launch, which records `current` as seen: there is nothing to show, and the
    /// next upgrade counts from here. Otherwise nothing is recorded: the features stay new
    /// until the app says it showed them (``markWhatsNewSeen(current:store:)``), so a
    /// background launch does not use them up unseen.
    package func whatsNewSinceLastSeen(
        current: Version,
        environment: ConditionEnvironment,
        store: any UpdatePromptStore
    ) throws -> [Feature] {
        guard let lastSeen = store.load().lastSeenVersion.flatMap(Version.init) else {
            Self.markWhatsNewSeen(current: current, store: store)
            return []
        }
        return try whatsNew(from: lastSeen, to: current, environment: environment)
    }

    /// Records that the user saw what's new up to `current`, so it is not shown again.
    package static func markWhatsNewSeen(current: Version, store: any UpdatePromptStore) {
        var state = store.load()
        if let lastSeen = state.lastSeenVersion.flatMap(Version.init), lastSeen >= current { return }
        state.lastSeenVersion = current.description
        store.save(state)
    }

    private func text(_ key: String, table: String) -> String? {
        lookUpString(forKey: key, table: table) ?? lookUpString(forKey: key, table: "Localizable")
    }
}
