import Foundation

/// The facts about this device and app that conditions are evaluated against.
///
/// Starts from ``current(appVersion:)`` (platform, versions, locale, display) and takes
/// any keys the app adds: `environment["channel"] = "beta"`. Nested values are reached
/// with key paths: `environment["defaults"] = ["flag": true]` answers `defaults.flag`.
public struct ConditionEnvironment: Sendable, Hashable {
    /// Every key and its value. `appVersion` and `version` name the same fact.
    public var values: [String: ConditionValue]

    /// An environment with exactly these values.
    public init(_ values: [String: ConditionValue] = [:]) {
        self.values = values
    }

    /// Reads or sets a key. Setting `appVersion` or `version` sets both.
    public subscript(key: String) -> ConditionValue? {
        get { values[key] }
        set {
            values[key] = newValue
            if key == "appVersion" { values["version"] = newValue }
            if key == "version" { values["appVersion"] = newValue }
            if key == "locale", case .string(let identifier)? = newValue {
                let (language, region) = Self.split(locale: identifier)
                values["language"] = .string(language)
                values["region"] = region.map(ConditionValue.string)
            }
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
    /// and `version` (when known), `displayScale` (1 off Apple platforms), `device`,
    /// `locale`, `language` and `region`.
    public static func current(appVersion: String? = nil) -> ConditionEnvironment {
        var environment = ConditionEnvironment()
        environment["platform"] = .string(platformName)
        let os = ProcessInfo.processInfo.operatingSystemVersion
        environment["systemVersion"] = .string("\(os.majorVersion).\(os.minorVersion).\(os.patchVersion)")
        let bundleVersion = Bundle.main.object(forInfoDictionaryKey: "CFBundleShortVersionString") as? String
        if let version = appVersion ?? bundleVersion { environment["appVersion"] = .string(version) }
        environment["displayScale"] = .number("1")
        environment["device"] = .string(defaultDevice)
        environment["locale"] = .string(Locale.current.identifier)
        return environment
    }

    /// A digest of every key and value: equal environments have equal fingerprints. A sync
    /// keeps it with the version it installed, to know a `304` needs no re-planning.
    var fingerprint: String {
        var text = ""
        for key in values.keys.sorted() {
            ConditionValue.string(key).appendCanonical(to: &text)
            values[key]!.appendCanonical(to: &text)
        }
        return ContentHash.of(Array(text.utf8), using: .sha256).hex
    }

    /// Splits `pt_BR`, `pt-BR` or `zh-Hant_TW` into language and region.
    static func split(locale identifier: String) -> (language: String, region: String?) {
        let parts = identifier.split(whereSeparator: { $0 == "_" || $0 == "-" }).map(String.init)
        let language = parts.first ?? identifier
        let region = parts.dropFirst().last(where: { $0.count == 2 || $0.allSatisfy(\.isNumber) })
        return (language, region)
    }

    private static var platformName: String {
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

    private static var defaultDevice: String {
        #if os(iOS)
        return "iphone"  // The app sets "ipad" from UIDevice: UIKit is not a dependency here.
        #elseif os(tvOS)
        return "tv"
        #elseif os(watchOS)
        return "watch"
        #elseif os(visionOS)
        return "vision"
        #else
        return "desktop"
        #endif
    }
}
