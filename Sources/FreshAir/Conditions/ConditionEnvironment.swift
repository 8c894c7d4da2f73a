import Foundation

/// The facts about this device and app that conditions are evaluated against.
///
/// Starts from ``current(appVersion:)`` (platform, versions, locale, display) and takes
/// any keys the app adds: `environment["channel"] = "beta"`. Nested values are reached
/// with key paths: `environment["defaults"] = ["flag": true]` answers `defaults.flag`.
public struct ConditionEnvironment: Sendable, Hashable {
    /// Every key and its value. `appVersion` and `version` name the same fact.
    public var values: [String: ConditionValue]

    /// Keys whose values ``current(appVersion:)`` could not read here and filled with a
    /// stand-in: `displayScale` (and an unknown `device`) off the main thread, the languages in
    /// an app extension, whose bundle is not the app's. A sync replaces them with what the
    /// last launch that could read them saw (``RememberedTraits``); setting a key clears it.
    package var assumedKeys: Set<String> = []

    /// An environment with exactly these values.
    public init(_ values: [String: ConditionValue] = [:]) {
        self.values = values
    }

    // Equal when the facts are: whether one was read or assumed is not a fact of its own.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.values == rhs.values }
    public func hash(into hasher: inout Hasher) { hasher.combine(values) }

    /// Reads or sets a key. Setting `appVersion` or `version` sets both. Setting `locale` sets
    /// `language` and `region` from it; setting `language` to another than the locale's moves
    /// the locale to it (`en_US`, then `language` `de`: `de_US`), so that texts are looked up in
    /// the language the conditions chose files for.
    public subscript(key: String) -> ConditionValue? {
        get { values[key] }
        set {
            values[key] = newValue
            assumedKeys.subtract(Self.linkedKeys(of: key))
            if key == "appVersion" { values["version"] = newValue }
            if key == "version" { values["appVersion"] = newValue }
            if key == "locale", case .string(let identifier)? = newValue {
                let (language, region) = Self.split(locale: identifier)
                values["language"] = .string(language)
                values["region"] = region.map(ConditionValue.string)
            }
            if key == "language", case .string(let language)? = newValue, case .string(let locale)? = values["locale"],
                Self.split(locale: locale).language != language
            {
                let region = Self.split(locale: locale).region
                values["locale"] = .string(region.map { "\(language)_\($0)" } ?? language)
            }
        }
    }

    /// The keys a subscript setter may change along with `key`.
    private static func linkedKeys(of key: String) -> [String] {
        switch key {
        case "appVersion", "version": ["appVersion", "version"]
        case "locale", "language": ["locale", "language", "region"]
        default: [key]
        }
    }

    /// The value at a dotted key path: first the whole path as one key, then nested maps.
    public func value(at path: [String]) -> ConditionValue? {
        if path.count > 1, let flat = values[path.joined(separator: ".")] { return flat }
        guard let first = path.first, var current = values[first] else { return nil }
        for part in path.dropFirst() {
            guard case .map(let nested) = current, let next = nested[part] else { return nil }
            current = next
        }
        return current
    }

    /// The environment of the running process: `platform`, `systemVersion`, `appVersion`
    /// and `version` (when known), `build`, `displayScale`, `device`, `locale`, `language`
    /// and `region`.
    ///
    /// - `language` (and `region`, when the localization names one) is the app's own
    ///   localization the user gets (`AppLocalization`): an app localized in English and
    ///   German, on a French device with German second, reads German.
    /// - `displayScale` is the main screen's where the platform has one (iOS, tvOS, visionOS,
    ///   macOS), and `device` comes from UIKit's idiom (`iphone`, `ipad`, `mac`, `tv`,
    ///   `vision`). Both are read when this is called on the main thread (call it from the
    ///   main actor at launch); off it, `device` comes from the hardware model and
    ///   `displayScale` is 1 unless a sync of a ``FreshAirContent`` remembered the scale of an
    ///   earlier launch (a background launch plans for the screen the user has).
    /// - An iOS app running on a Mac (Mac Catalyst, an iPad app on Apple silicon) is `macOS`,
    ///   the platform its `systemVersion` belongs to.
    public static func current(appVersion: String? = nil) -> ConditionEnvironment {
        var environment = ConditionEnvironment()
        let platform = DeviceClass.platform(compiledFor: compiledPlatform, runningOnMac: DeviceTraits.runningOnMac)
        environment["platform"] = .string(platform)
        let os = ProcessInfo.processInfo.operatingSystemVersion
        environment["systemVersion"] = .string("\(os.majorVersion).\(os.minorVersion).\(os.patchVersion)")
        let bundleVersion = MainBundle.info("CFBundleShortVersionString")
        if let version = appVersion ?? bundleVersion { environment["appVersion"] = .string(version) }
        if let build = MainBundle.info("CFBundleVersion") {
            environment["build"] = .string(build)
        }
        let scale = DeviceTraits.screenScale
        environment["displayScale"] = .number(scale.map(Self.spelled(scale:)) ?? "1")
        let device =
            DeviceTraits.idiomName.flatMap(DeviceClass.name(idiom:))
            ?? DeviceTraits.hardwareModel.flatMap(DeviceClass.name(hardwareModel:))
        environment["device"] = .string(device ?? DeviceClass.fallback(platform: platform))
        environment["locale"] = .string(Locale.current.identifier)
        // The development region from Info.plist, not `Bundle.developmentLocalization`, which
        // traps on Linux for a bundle without one (a test runner, a command-line tool).
        if let localization = AppLocalization.best(
            app: MainBundle.localizations,
            preferred: Locale.preferredLanguages,
            development: MainBundle.info("CFBundleDevelopmentRegion")
        ) {
            // The app's language beside the system's locale, both kept (values, not the
            // subscript, which would move the locale to the language).
            let (language, region) = split(locale: localization)
            environment.values["language"] = .string(language)
            if let region { environment.values["region"] = .string(region) }
        }
        environment.assumedKeys = assumedKeys(
            screenRead: scale != nil,
            deviceRead: device != nil,
            inAppExtension: MainBundle.isAppExtension
        )
        return environment
    }

    /// The keys ``current(appVersion:)`` filled with stand-ins: a decision kept apart from the
    /// platform reads, so it is tested everywhere.
    static func assumedKeys(screenRead: Bool, deviceRead: Bool, inAppExtension: Bool) -> Set<String> {
        var keys: Set<String> = []
        if !screenRead { keys.insert("displayScale") }
        if !deviceRead { keys.insert("device") }
        // An extension's own bundle lists its localizations, not the app's.
        if inAppExtension { keys.formUnion(["locale", "language", "region"]) }
        return keys
    }

    /// `3` for 3.0, `1.5` for 1.5: as a manifest's conditions write a scale.
    static func spelled(scale: Double) -> String {
        scale == scale.rounded() ? String(Int(scale)) : String(scale)
    }

    /// Splits `pt_BR`, `pt-BR` or `zh-Hant_TW` into language and region.
    static func split(locale identifier: String) -> (language: String, region: String?) {
        let parts = identifier.split(whereSeparator: { $0 == "_" || $0 == "-" }).map(String.init)
        let language = parts.first ?? identifier
        let region = parts.dropFirst().last(where: { $0.count == 2 || $0.allSatisfy(\.isNumber) })
        return (language, region)
    }

    /// The platform this code was compiled for.
    static var compiledPlatform: String {
        #if os(iOS)
        return "iOS"
        #elseif os(tvOS)
        return "tvOS"
        #elseif os(watchOS)
        return "watchOS"
        #elseif os(visionOS)
        return "visionOS"
        #elseif os(macOS)
        return "macOS"
        #elseif os(Linux)
        return "Linux"
        #elseif os(Windows)
        return "Windows"
        #else
        return "unknown"
        #endif
    }
}
