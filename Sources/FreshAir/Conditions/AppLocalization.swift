import Foundation

/// Which of an app's own localizations a user gets, as Apple's `Bundle.preferredLocalizations`
/// decides: the first of the user's preferred languages the app is localized in, matched
/// exactly, then less and less specific (`zh-Hant-TW` takes `zh-Hant`, then `zh`), then any
/// localization of the same language (`pt-PT` takes `pt-BR`); else the app's
/// development language. An app localized in English and German, on a French device with
/// German second, reads German, not French, which the device's locale alone would ask for.
///
/// Pure, so that it is tested on Linux, whose Foundation always answers the first localization.
enum AppLocalization {
    /// The localization to use, or `nil` when the app declares none.
    static func best(app localizations: [String], preferred languages: [String], development: String?) -> String? {
        let offered = localizations.filter { $0 != "Base" }
        guard !offered.isEmpty else { return nil }
        let normalized = offered.map(normalize)
        for language in languages.map(normalize) {
            // `zh-hant-tw`, then `zh-hant`, then `zh`; then any `zh-…` the app has.
            var candidate = Substring(language)
            while true {
                if let match = normalized.firstIndex(of: String(candidate)) { return offered[match] }
                guard let dash = candidate.lastIndex(of: "-") else { break }
                candidate = candidate[..<dash]
            }
            if let sibling = normalized.firstIndex(where: { code($0) == code(language) }) { return offered[sibling] }
        }
        if let development, offered.contains(development) { return development }
        return offered.first
    }

    private static func normalize(_ identifier: String) -> String {
        identifier.replacingOccurrences(of: "_", with: "-").lowercased()
    }

    private static func code(_ identifier: String) -> String {
        String(identifier.prefix { $0 != "-" })
    }
}
