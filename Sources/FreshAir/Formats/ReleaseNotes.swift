public import Foundation

/// `release_notes.json`: the app's version history and what each release brought.
///
/// ```json
/// {"minimumVersion": "1.2", "upgradeURL": "https://…",
///  "releases": [{"version": "1.1", "features": ["apple_pay", "peek_pop"],
///                "conditions": [{"key": "systemVersion", "value": "8.0"}]}]}
/// ```
/// The old schema's quirks load too: trailing commas, a missing `comparison` (meaning `gte`),
/// versions written as numbers, a `condition` string instead of `conditions`.
public struct ReleaseNotes: Sendable, Hashable {
    /// One release and the features it introduced, in the order written.
    package struct Release: Sendable, Hashable {
        /// The app version the release is.
        package var version: Version
        /// Feature keys: texts are `<key>.title` and `<key>.description`, the image is named `<key>`.
        package var features: [String]
        /// When this release applies to a device (always, when none is given).
        package var condition: Condition
        /// The oldest system the release runs on (`minimumSystemVersion`, as the Android
        /// original and the iOS schema write it): a device with an older `systemVersion`, or
        /// none, is not offered the release and is not told about its features.
        package var minimumSystemVersion: Version?

        /// A release of `version` listing `features`, for devices `condition` selects.
        package init(
            version: Version,
            features: [String],
            condition: Condition = .always,
            minimumSystemVersion: Version? = nil
        ) {
            self.version = version
            self.features = features
            self.condition = condition
            self.minimumSystemVersion = minimumSystemVersion
        }

        /// Whether the release applies to a device with `environment`: its condition holds
        /// and its system is new enough.
        package func applies(in environment: ConditionEnvironment) -> Bool {
            if let minimumSystemVersion {
                guard let system = environment["systemVersion"]?.version, system >= minimumSystemVersion else {
                    return false
                }
            }
            return condition.evaluate(in: environment)
        }
    }

    /// The members FreshAir reads at the top level and in each release; `breeze validate`
    /// warns about any other.
    package static let knownMembers: Set<String> = ["minimumVersion", "upgradeURL", "releases"]
    /// Members of a release FreshAir reads; `validate` warns about others.
    package static let knownReleaseMembers: Set<String> = [
        "version", "features", "condition", "conditions", "minimumSystemVersion",
    ]

    /// Versions below this must update.
    public var minimumVersion: Version?
    /// Where to send the user to update (the App Store page, say).
    public var upgradeURL: URL?
    /// Every release, oldest first.
    package var releases: [Release]

    /// Release notes; `releases` are sorted by version.
    package init(minimumVersion: Version? = nil, upgradeURL: URL? = nil, releases: [Release]) {
        self.minimumVersion = minimumVersion
        self.upgradeURL = upgradeURL
        self.releases = releases.sorted { $0.version < $1.version }
    }

    /// Reads a release-notes document.
    /// - Throws: `ManifestError` naming `source`, the release and what is wrong.
    package init(data: Data, source: String) throws(ManifestError) {
        let object: JSONValue
        do { object = try JSONReader.parse(data, lenient: true) } catch {
            throw ManifestError(source: source, problem: .invalidJSON(error))
        }
        guard object.pairs != nil else {
            throw ManifestError(source: source, problem: .unexpectedShape("expected an object with \"releases\""))
        }
        func version(_ value: JSONValue?, _ field: String) throws(ManifestError) -> Version? {
            guard let value, !value.isNull else { return nil }
            guard let parsed = Version(value.string ?? value.numberValueText ?? "") else {
                throw ManifestError(
                    source: source,
                    problem: .unexpectedShape("\"\(field)\" is not a version: \(value.serialized(indent: 0))")
                )
            }
            return parsed
        }
        let minimumVersion = try version(object["minimumVersion"], "minimumVersion")
        var upgradeURL: URL?
        if let text = object["upgradeURL"]?.string {
            guard let url = URL(string: text) else {
                throw ManifestError(source: source, problem: .unexpectedShape("\"upgradeURL\" is not a URL: \(text)"))
            }
            upgradeURL = url
        }
        guard let list = object["releases"]?.array else {
            throw ManifestError(source: source, problem: .unexpectedShape("\"releases\" is missing or not an array"))
        }
        var releases: [Release] = []
        for (index, item) in list.enumerated() {
            guard item.pairs != nil else {
                throw ManifestError(source: source, problem: .unexpectedShape("releases[\(index)] is not an object"))
            }
            guard let number = try version(item["version"], "releases[\(index)].version") else {
                throw ManifestError(source: source, problem: .unexpectedShape("releases[\(index)] has no \"version\""))
            }
            let features = (item["features"]?.array ?? []).compactMap(\.string)
            var parts: [Condition] = []
            do throws(ManifestEntry.Problem) {
                if let text = item["condition"]?.string, !text.isEmpty {
                    do { parts.append(try Condition(parsing: text)) } catch {
                        throw ManifestEntry.Problem.invalidCondition(error)
                    }
                }
                if let requirements = item["conditions"]?.array {
                    parts.append(Condition(requirements: try ManifestEntry.requirements(requirements)))
                }
            } catch {
                throw ManifestError(source: source, problem: .entry(index: index, filename: "release \(number)", error))
            }
            let minimumSystem = try version(item["minimumSystemVersion"], "releases[\(index)].minimumSystemVersion")
            releases.append(
                Release(
                    version: number,
                    features: features,
                    condition: parts.isEmpty ? .always : .all(parts),
                    minimumSystemVersion: minimumSystem
                )
            )
        }
        self.init(minimumVersion: minimumVersion, upgradeURL: upgradeURL, releases: releases)
    }

    /// The releases that apply in `environment` (conditions and `minimumSystemVersion`), oldest first.
    package func releases(for environment: ConditionEnvironment) -> [Release] {
        releases.filter { $0.applies(in: environment) }
    }

    /// The releases after `from` (up to and including `to`, when given) that do not apply in
    /// `environment`, each with why in words:
    /// what an author needs to hear when a preview says "nothing new" (a `systemVersion` that
    /// is not set, or this machine's own, drops every release with a `minimumSystemVersion`).
    package func releasesLeftOut(
        after from: Version,
        through to: Version? = nil,
        environment: ConditionEnvironment
    ) -> [(version: Version, reason: String)] {
        let inRange = { (version: Version) in version > from && to.map { version <= $0 } ?? true }
        return releases.filter { inRange($0.version) && !$0.applies(in: environment) }.map { release in
            if let minimum = release.minimumSystemVersion {
                guard let system = environment["systemVersion"]?.version else {
                    return (release.version, "needs systemVersion \(minimum) or later, and none is set")
                }
                if system < minimum {
                    return (release.version, "needs systemVersion \(minimum) or later; this environment has \(system)")
                }
            }
            let reason =
                release.condition.evaluate(knowing: environment) == nil
                ? "its condition reads keys this environment does not set"
                : "its condition is false in this environment"
            return (release.version, reason)
        }
    }

    /// Feature keys of the releases after `from` up to and including `to`, oldest first,
    /// each once. Empty when `from` is `nil` (a first launch has nothing "new").
    package func featuresNew(
        from: Version?,
        to: Version,
        environment: ConditionEnvironment
    ) -> [(key: String, version: Version)] {
        guard let from, from < to else { return [] }
        var seen: Set<String> = []
        return releases(for: environment)
            .filter { $0.version > from && $0.version <= to }
            .flatMap { release in release.features.map { (key: $0, version: release.version) } }
            .filter { seen.insert($0.key).inserted }
    }
}
