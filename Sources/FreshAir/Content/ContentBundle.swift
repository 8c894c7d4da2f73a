public import Foundation
import Synchronization

/// Synced content, looked up the way apps look up resources in a `Bundle`: the same for a
/// manifest bundle, a package or a repository bundle.
///
/// Search order for a resource: the bundle root and `Resources/`, then each preferred
/// localization's `.lproj` (`pt-BR` tries `pt-BR.lproj`, `pt_BR.lproj`, `pt.lproj`), then
/// `Base.lproj`, then the development localization's.
///
/// A value lists each folder it searches once and answers later lookups from memory, so a
/// view's `body` may look things up freely: take a new value when the content changes
/// (``ContentModel/live`` is a new one after each update). Names match exactly, as on a
/// device's case-sensitive volume.
public struct ContentBundle: Sendable {
    /// The content's folder (a store's `liveDirectory`, or any folder).
    public let root: URL
    /// Languages in order of preference (`["pt-BR", "en"]`).
    public var preferredLocalizations: [String]
    /// The language the content was written in; the last fallback.
    public var developmentLocalization: String
    /// 1, 2 or 3: which `@2x`/`@3x` image variant fits best.
    public var displayScale: Double
    /// `ipad`, `iphone`…: which `~ipad`/`~iphone` image variant fits.
    public var device: String?
    private let tables = TableCache()
    private let listings = FolderListings()

    /// Looks resources up in `root` (a live version), for `preferredLocalizations` in order, then
    /// `developmentLocalization`; images for `displayScale` and `device` (`iphone`, `ipad`).
    public init(
        root: URL,
        preferredLocalizations: [String] = Locale.preferredLanguages,
        developmentLocalization: String = "en",
        displayScale: Double = 1,
        device: String? = nil
    ) {
        self.root = root
        self.preferredLocalizations = preferredLocalizations
        self.developmentLocalization = developmentLocalization
        self.displayScale = displayScale
        self.device = device
    }

    /// Takes `locale`/`language`, `displayScale` and `device` from a condition environment,
    /// so lookups agree with what the sync selected.
    public init(root: URL, environment: ConditionEnvironment, developmentLocalization: String = "en") {
        let locale = environment["locale"]?.text
        let language = environment["language"]?.text
        self.init(
            root: root,
            preferredLocalizations: [locale, language].compactMap { $0 },
            developmentLocalization: developmentLocalization,
            displayScale: environment["displayScale"]?.text.flatMap(Double.init) ?? 1,
            device: environment["device"]?.text
        )
    }

    /// `pt-BR` → `pt-BR`, `pt_BR`, `pt`: the folder names a localization may use.
    static func variants(of localization: String) -> [String] {
        var parts = localization.split(whereSeparator: { $0 == "-" || $0 == "_" }).map(String.init)
        var names: [String] = []
        while !parts.isEmpty {
            for name in [parts.joined(separator: "-"), parts.joined(separator: "_")] where !names.contains(name) {
                names.append(name)
            }
            parts.removeLast()
        }
        return names
    }

    /// The localizations searched, in order: preferred (with variants), `Base`, development.
    func localizationOrder(_ only: String?) -> [String] {
        var order: [String] = []
        let wanted = only.map { [$0] } ?? (preferredLocalizations + ["Base", developmentLocalization])
        for localization in wanted {
            for variant in Self.variants(of: localization) where !order.contains(variant) { order.append(variant) }
        }
        return order
    }

    /// Folders searched, relative to ``root``.
    func searchFolders(localization: String?) -> [String] {
        (localization == nil ? ["", "Resources"] : [])
            + localizationOrder(localization).flatMap { ["\($0).lproj", "Resources/\($0).lproj"] }
    }

    /// The URL of a resource, or `nil` when no folder in the search order has it.
    ///
    /// - Parameters:
    ///   - name: the file name, with its extension unless `ext` gives it.
    ///   - ext: the extension, without the dot.
    ///   - subdirectory: a folder below each searched folder.
    ///   - localization: search only this localization's `.lproj`.
    public func url(
        forResource name: String,
        withExtension ext: String? = nil,
        subdirectory: String? = nil,
        localization: String? = nil
    ) -> URL? {
        let file = ext.map { $0.isEmpty ? name : "\(name).\($0)" } ?? name
        for folder in searchFolders(localization: localization) {
            let relative = [folder, subdirectory ?? "", file].filter { !$0.isEmpty }.joined(separator: "/")
            let slash = relative.lastIndex(of: "/")
            let parent = slash.map { String(relative[..<$0]) } ?? ""
            let leaf = slash.map { String(relative[relative.index(after: $0)...]) } ?? relative
            if listing(of: parent).contains(leaf) { return root.appendingPathComponent(relative) }
        }
        return nil
    }

    /// The names in a folder below ``root``, listed once per value and then answered from
    /// memory: lookups from a view's `body` touch no disk after the first. Empty when the
    /// folder does not exist.
    private func listing(of folder: String) -> Set<String> {
        listings.names(in: folder) {
            let path = folder.isEmpty ? root.path : root.appendingPathComponent(folder).path
            return Set((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
        }
    }

    /// A localized string from `table` (default `Localizable`): `.strings` in each `.lproj`,
    /// then an `.xcstrings` catalog, in localization order. Returns `value` (or the key) when
    /// no table has it, as `Bundle` does. A malformed table is skipped.
    public func localizedString(forKey key: String, value: String? = nil, table: String? = nil) -> String {
        lookUpString(forKey: key, table: table ?? "Localizable") ?? ((value?.isEmpty ?? true) ? key : value!)
    }

    /// The string, or `nil` when no table in the search order has it.
    func lookUpString(forKey key: String, table: String) -> String? {
        for localization in localizationOrder(nil) {
            if let found = (try? stringsTable(named: table, localization: localization))??.strings[key] { return found }
        }
        return nil
    }

    /// One localization's table: `<localization>.lproj/<table>.strings`, else that language in
    /// `<table>.xcstrings`; `nil` when neither exists.
    /// - Throws: `StringsTable/SyntaxError` or `ManifestError` for a malformed file.
    package func stringsTable(named table: String, localization: String) throws -> StringsTable? {
        try tables.table(key: "\(localization)/\(table)") {
            for folder in ["\(localization).lproj", "Resources/\(localization).lproj"] {
                let url = root.appendingPathComponent("\(folder)/\(table).strings")
                if let data = FileManager.default.contents(atPath: url.path) {
                    return try StringsTable(stringsFile: data, source: url.path)
                }
            }
            for folder in ["", "Resources/"] {
                let url = root.appendingPathComponent("\(folder)\(table).xcstrings")
                if let data = FileManager.default.contents(atPath: url.path) {
                    return try StringsTable(catalog: data, language: localization, source: url.path)
                }
            }
            return nil
        }
    }

    /// The best image file for `name` on this display and device: `name~ipad@2x.png` over
    /// `name@2x.png` on an iPad at 2x; the exact scale, else the nearest larger, else the
    /// largest smaller. PNG, JPEG, PDF, HEIC and WebP are considered.
    public func imageURL(named name: String, subdirectory: String? = nil) -> URL? {
        image(named: name, subdirectory: subdirectory)?.url
    }

    /// The same file with the scale it was drawn for, which an image view needs to size it:
    /// `hero@3x.png` is scale 3, so 3 pixels a point (`uiImage()` on Apple platforms makes the
    /// `UIImage`). The folder listing is read once per value, as for every lookup.
    public func image(named name: String, subdirectory: String? = nil) -> ContentImage? {
        for folder in searchFolders(localization: nil) {
            let relative = [folder, subdirectory ?? ""].filter { !$0.isEmpty }.joined(separator: "/")
            let candidates = listing(of: relative)
                .compactMap { ImageFileName($0) }
                .filter { $0.base == name && ($0.device == nil || $0.device == device?.lowercased()) }
            // Ties (`a.png` and `a.jpg`) go to the first name in order, as a listing's order is not kept.
            guard
                let best = candidates.min(by: { rank($0) == rank($1) ? $0.fileName < $1.fileName : rank($0) < rank($1) }
                )
            else { continue }
            let directory = relative.isEmpty ? root : root.appendingPathComponent(relative)
            return ContentImage(url: directory.appendingPathComponent(best.fileName), scale: Double(best.scale))
        }
        return nil
    }

    /// Lower is better: device-specific first, then how well the scale fits.
    private func rank(_ variant: ImageFileName) -> (Int, Int, Double) {
        let deviceRank = variant.device == nil ? 1 : 0
        let scale = Double(variant.scale)
        if scale == displayScale { return (deviceRank, 0, 0) }
        if scale > displayScale { return (deviceRank, 1, scale - displayScale) }
        return (deviceRank, 2, displayScale - scale)
    }

    /// `release_notes.json` at the root or in `Resources/`, or `nil` when there is none.
    public func releaseNotes() throws -> ReleaseNotes? {
        guard let url = url(forResource: "release_notes", withExtension: "json") else { return nil }
        return try ReleaseNotes(data: Data(contentsOf: url), source: url.path)
    }

    /// `presentation.json` (`{"screen", "viewController", "configuration"}`: a screen the
    /// content asks the app to show) as strict JSON bytes, the old example's `"key" = value`
    /// and trailing commas normalized, for the app to decode into a `Decodable` of its own.
    /// `nil` when there is none; it throws when the file is not such an object.
    public func presentation() throws -> Data? {
        guard let url = url(forResource: "presentation", withExtension: "json") else { return nil }
        return try Presentation(data: Data(contentsOf: url), source: url.path).json
    }
}

/// Parsed tables, loaded once per bundle value.
private final class TableCache: Sendable {
    private let tables = Mutex<[String: StringsTable?]>([:])

    func table(key: String, load: () throws -> StringsTable?) throws -> StringsTable? {
        if let cached = tables.withLock({ $0[key] }) { return cached }
        let loaded = try load()
        tables.withLock { $0[key] = .some(loaded) }
        return loaded
    }
}

/// Folder listings, read once per bundle value.
private final class FolderListings: Sendable {
    private let listings = Mutex<[String: Set<String>]>([:])

    func names(in folder: String, list: () -> Set<String>) -> Set<String> {
        if let cached = listings.withLock({ $0[folder] }) { return cached }
        let names = list()
        listings.withLock { $0[folder] = names }
        return names
    }
}
