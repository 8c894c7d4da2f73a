package import Foundation
import FreshAir

/// What a served folder holds for a device, found by looking: bundles (`manifest.json`),
/// repositories (`index.json` in a folder named by its id) and packages (archives), at its
/// top and one folder down. `breeze serve` prints the command that syncs each, so the first
/// sync after `breeze release … site/…` and `breeze serve site` is one copy and paste.
package enum ServedContent {
    /// One thing a device can sync from the served folder.
    package struct Item: Sendable, Equatable {
        package enum Kind: String, Sendable { case bundle, repository, package }
        package var kind: Kind
        /// The URL `breeze sync` takes for it.
        package var url: URL
    }

    /// The items under `root`, served at `base`, in path order: `root` itself when it is a
    /// bundle, else what its folders and files are. Hidden names are passed over.
    package static func items(in root: URL, servedAt base: URL) -> [Item] {
        if isBundle(root) { return [Item(kind: .bundle, url: base)] }
        var items: [Item] = []
        for name in sortedNames(in: root) {
            let path = root.appendingPathComponent(name)
            if isFolder(path) {
                if isBundle(path) {
                    items.append(Item(kind: .bundle, url: base.appendingPathComponent(name + "/")))
                } else if isRepository(path) {
                    items.append(Item(kind: .repository, url: base.appendingPathComponent("\(name)/index.json")))
                } else {
                    // One folder down: site/apps/Content.freshair, site/repos/main.
                    for inner in sortedNames(in: path) {
                        let innerPath = path.appendingPathComponent(inner)
                        let url = base.appendingPathComponent(name).appendingPathComponent(inner)
                        if isFolder(innerPath), isBundle(innerPath) {
                            items.append(Item(kind: .bundle, url: url.appendingPathComponent("")))
                        } else if isFolder(innerPath), isRepository(innerPath) {
                            items.append(Item(kind: .repository, url: url.appendingPathComponent("index.json")))
                        } else if isPackage(innerPath) {
                            items.append(Item(kind: .package, url: url))
                        }
                    }
                }
            } else if isPackage(path) {
                items.append(Item(kind: .package, url: base.appendingPathComponent(name)))
            }
        }
        return items
    }

    /// The lines `breeze serve` prints: a sync command for each item, at most `limit` of them.
    package static func syncLines(_ items: [Item], limit: Int = 8) -> [String] {
        guard !items.isEmpty else { return [] }
        var lines = ["A device syncs what it serves with:"]
        lines += items.prefix(limit).map { "  breeze sync \($0.url.absoluteString) DIR    (a \($0.kind.rawValue))" }
        if items.count > limit { lines.append("  … and \(items.count - limit) more") }
        return lines
    }

    private static func sortedNames(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { !$0.hasPrefix(".") }
            .sorted()
    }

    private static func isFolder(_ url: URL) -> Bool {
        var folder: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &folder) && folder.boolValue
    }

    private static func isBundle(_ folder: URL) -> Bool {
        FileManager.default.fileExists(atPath: folder.appendingPathComponent("manifest.json").path)
    }

    private static func isRepository(_ folder: URL) -> Bool {
        FileManager.default.fileExists(atPath: folder.appendingPathComponent("index.json").path)
    }

    /// An archive a package can be; a repository's own archives sit beside its index and are
    /// not listed, as their folder is.
    private static func isPackage(_ file: URL) -> Bool {
        ArchiveFormat(fileName: file.lastPathComponent) != nil && !isFolder(file)
    }
}
