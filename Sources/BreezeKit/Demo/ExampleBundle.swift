package import Foundation
package import FreshAir

/// The `TestEmbeddedManifest.freshair` example of the specification, written to disk with
/// real hashes: a root manifest selecting one of two child bundles by app version.
///
/// ```
/// TestEmbeddedManifest.freshair/
///   manifest.json                 Embed1 when platform == iOS, systemVersion > 8.4, appVersion < 1.0
///                                 Embed2 when platform == iOS, systemVersion > 8.4, appVersion > 1.0
///   Embed1.freshair/manifest.json   bar.md, foo.md
///   Embed2.freshair/manifest.json   baz.md, zab.md
/// ```
package enum ExampleBundle {
    /// The bundle folder's name.
    package static let name = "TestEmbeddedManifest.freshair"

    /// The environment of a device that selects `Embed1` (`appVersion` 0.9); pass another
    /// `appVersion` (1.1) for `Embed2`.
    package static func environment(appVersion: String) -> ConditionEnvironment {
        var environment = ConditionEnvironment()
        environment["platform"] = "iOS"
        environment["systemVersion"] = "9.0"
        environment["appVersion"] = .string(appVersion)
        environment["locale"] = "en_US"
        return environment
    }

    /// The default text of each content file.
    package static let contents: [String: String] = [
        "Embed1.freshair/bar.md": "# Bar\n\nShown to app versions before 1.0.\n",
        "Embed1.freshair/foo.md": "# Foo\n\nAlso for app versions before 1.0.\n",
        "Embed2.freshair/baz.md": "# Baz\n\nShown to app versions after 1.0.\n",
        "Embed2.freshair/zab.md": "# Zab\n\nAlso for app versions after 1.0.\n",
    ]

    /// Writes the bundle into `parent` (replacing what is there) and returns its folder.
    /// `overrides` replaces the text of some files, as a publisher's edit would.
    @discardableResult
    package static func write(in parent: URL, overrides: [String: String] = [:]) throws -> URL {
        let bundle = parent.appendingPathComponent(name)
        let files = contents.merging(overrides) { _, new in new }
        for (path, text) in files {
            try PublishedFile.write(Data(text.utf8), to: bundle.appendingPathComponent(path))
        }
        func entries(_ folder: String) -> [[String: Any]] {
            files.keys.filter { $0.hasPrefix(folder + "/") }.sorted().map { path in
                [
                    "filename": String(path.dropFirst(folder.count + 1)),
                    "sha": ContentHash.of(Array(files[path]!.utf8), using: .sha256).hex,
                ]
            }
        }
        var root: [[String: Any]] = []
        for (child, comparison) in [("Embed1", "lt"), ("Embed2", "gt")] {
            let data = try ManifestJSON.encode(entries("\(child).freshair"))
            try PublishedFile.write(data, to: bundle.appendingPathComponent("\(child).freshair/manifest.json"))
            root.append([
                "filename": "\(child).freshair/manifest.json",
                "sha": ContentHash.of(data, using: .sha256).hex,
                "conditions": [
                    ["key": "platform", "value": "iOS", "comparison": "eq"],
                    ["key": "systemVersion", "value": "8.4", "comparison": "gt"],
                    ["key": "appVersion", "value": "1.0", "comparison": comparison],
                ],
            ])
        }
        try PublishedFile.write(try ManifestJSON.encode(root), to: bundle.appendingPathComponent("manifest.json"))
        return bundle
    }
}

/// Writes manifests the way people read them: two-space indent, `filename` first.
enum ManifestJSON {
    static func encode(_ entries: [[String: Any]]) throws -> Data {
        let data = try JSONSerialization.data(
            withJSONObject: entries,
            options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        )
        return data + Data("\n".utf8)
    }
}

/// Writes a file for a web server to publish, making sure a changed file's modification
/// time moves forward: servers derive `ETag` and `Last-Modified` from it at one-second
/// resolution, and an edit within the same second would otherwise look unchanged.
package enum PublishedFile {
    package static func write(_ data: Data, to url: URL) throws {
        let manager = FileManager.default
        if manager.contents(atPath: url.path) == data { return }
        let previous = (try? manager.attributesOfItem(atPath: url.path)[.modificationDate]) as? Date
        try manager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url, options: .atomic)
        if let previous {
            let next = max(Date(), previous.addingTimeInterval(1)).timeIntervalSince1970.rounded(.up)
            try manager.setAttributes([.modificationDate: Date(timeIntervalSince1970: next)], ofItemAtPath: url.path)
        }
    }
}
