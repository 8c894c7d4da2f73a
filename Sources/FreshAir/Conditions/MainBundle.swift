import Foundation

/// The app's Info.plist and localizations, where apps have them. A Linux executable has neither,
/// and asking Foundation there lists the executable's folder (all of `/usr/bin` for a tool
/// installed there) to find nothing, so this answers from Darwin only. On Linux, pass `appVersion`
/// and set `language` yourself; content lookups fall back to English as the development
/// localization.
enum MainBundle {
    static func info(_ key: String) -> String? {
        #if canImport(Darwin)
        Bundle.main.object(forInfoDictionaryKey: key) as? String
        #else
        nil
        #endif
    }

    static var localizations: [String] {
        #if canImport(Darwin)
        Bundle.main.localizations
        #else
        []
        #endif
    }

    /// Whether this process is an app extension (a Background Assets downloader, a widget):
    /// its main bundle is the `.appex`, not the app.
    static var isAppExtension: Bool {
        #if canImport(Darwin)
        Bundle.main.bundleURL.pathExtension == "appex"
        #else
        false
        #endif
    }
}
