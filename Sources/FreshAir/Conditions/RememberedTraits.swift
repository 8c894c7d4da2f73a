package import Foundation

/// The device facts a launch with a screen read, kept for launches without one.
///
/// A background launch (a `BGAppRefreshTask`, a Background Assets extension) has no screen
/// to read the scale from, and an extension's bundle does not list the app's languages; left
/// alone, such a sync would plan for 1× art in the development language, download it, and the
/// next foreground sync would download the right files back. Each ``FreshAirContent`` sync
/// keeps the facts it read in `traits.json` in the store's state folder, and fills the facts
/// its environment only assumed (``ConditionEnvironment/assumedKeys``) from there.
package struct RememberedTraits: Sendable, Hashable, Codable {
    /// `3`, as the environment writes it.
    package var displayScale: String?
    /// `iphone`, `ipad`…
    package var device: String?
    /// The language facts, kept as one: `locale`, `language` and `region` change together.
    package var locale: String?
    package var language: String?
    package var region: String?

    /// Nothing remembered.
    package init() {}

    /// The environment a sync plans for, and the traits to keep when they changed (`nil` when
    /// the file already says the same): a decision with no I/O, so it is tested alone.
    ///
    /// Keys the app set, or that were read here, always win; assumed ones take the remembered
    /// value when there is one.
    package static func reconcile(
        _ environment: ConditionEnvironment,
        remembered: RememberedTraits?
    ) -> (environment: ConditionEnvironment, remember: RememberedTraits?) {
        let kept = remembered ?? RememberedTraits()
        var read = kept
        var planned = environment
        let assumed = environment.assumedKeys

        if assumed.contains("displayScale") {
            if let scale = kept.displayScale { planned.values["displayScale"] = .number(scale) }
        } else {
            read.displayScale = environment.values["displayScale"]?.text
        }
        if assumed.contains("device") {
            if let device = kept.device { planned.values["device"] = .string(device) }
        } else {
            read.device = environment.values["device"]?.text
        }
        if assumed.contains("language") {
            if kept.language != nil {
                for (key, value) in [("locale", kept.locale), ("language", kept.language), ("region", kept.region)] {
                    planned.values[key] = value.map(ConditionValue.string)
                }
            }
        } else {
            read.locale = environment.values["locale"]?.text
            read.language = environment.values["language"]?.text
            read.region = environment.values["region"]?.text
        }
        return (planned, read == kept && remembered != nil ? nil : read)
    }

    /// The traits kept in `folder`, or `nil` when none are (or the file is unreadable: the
    /// next launch with a screen writes it again).
    package static func load(from folder: URL) -> RememberedTraits? {
        guard let data = FileManager.default.contents(atPath: file(in: folder).path) else { return nil }
        return try? JSONDecoder().decode(RememberedTraits.self, from: data)
    }

    /// Keeps these traits in `folder`, replacing the file atomically. A failure only costs the
    /// next background sync its memory, so it is not an error of the sync.
    package func save(in folder: URL) {
        guard let data = try? JSONEncoder().encode(self) else { return }
        try? data.write(to: Self.file(in: folder), options: .atomic)
    }

    private static func file(in folder: URL) -> URL { folder.appendingPathComponent("traits.json") }
}
