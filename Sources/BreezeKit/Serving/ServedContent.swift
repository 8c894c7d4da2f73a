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
        /// The keys its signed document names (`--trusted-key` for each), and the identity it
        /// is signed for when a device at `url` would expect another (`--identity`).
        package var signers: [String] = []
        package var identity: String?
    }

    /// The items under `root`, served at `base`, in path order: `root` itself when it is a
    /// bundle, else what its folders and files are. Hidden names are passed over.
    package static func items(in root: URL, servedAt base: URL) -> [Item] {
        listed(in: root, servedAt: base).map { item in
            var item = item
            let folder = root.appendingPathComponent(String(item.url.path.dropFirst(base.path.count)))
            let document =
                switch item.kind {
                case .bundle: folder.appendingPathComponent("manifest.json")
                case .repository: folder
                case .package: folder.appendingPathExtension("sig")
                }
            guard let data = try? Data(contentsOf: document), let json = try? JSONReader.parse(Array(data)) else {
                return item
            }
            item.signers = (json["signatures"]?.array ?? []).compactMap { $0["key"]?.string }
            // A device expects the URL's last path component (an index: its folder's name).
            let url = item.kind == .repository ? item.url.deletingLastPathComponent() : item.url
            let expected = url.path == "/" ? "/" : url.lastPathComponent
            if !item.signers.isEmpty, let signed = json["identity"]?.string, signed != expected {
                item.identity = signed
            }
            return item
        }
    }

    private static func listed(in root: URL, servedAt base: URL) -> [Item] {
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
        lines += items.prefix(limit).map { item in
            let keys = item.signers.map { " --trusted-key \($0)" }.joined()
            let identity = item.identity.map { " --identity \(shellWord($0))" } ?? ""
            return "  breeze sync \(item.url.absoluteString) DIR\(keys)\(identity)    (a \(item.kind.rawValue))"
        }
        if items.count > limit { lines.append("  … and \(items.count - limit) more") }
        return lines
    }

    /// `word` as a shell reads it back: as it is when plain, else in single quotes.
    private static func shellWord(_ word: String) -> String {
        let plain =
            !word.isEmpty
            && word.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || "0123456789._/-".unicodeScalars.contains($0))
            }
        return plain ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
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
