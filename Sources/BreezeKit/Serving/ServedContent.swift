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
        /// Where its signed document would be on disk (a root manifest, an index, a `.sig`),
        /// read only when its sync command is printed (see ``syncLines(_:limit:)``).
        package var document: URL?
    }

    /// The items under `root`, served at `base`, in path order: `root` itself when it is a
    /// bundle, else what its folders and files are. Hidden names are passed over.
    package static func items(in root: URL, servedAt base: URL) -> [Item] {
        listed(in: root, servedAt: base).map { item in
            var item = item
            let local = root.appendingPathComponent(String(item.url.path.dropFirst(base.path.count)))
            item.document =
                switch item.kind {
                case .bundle: local.appendingPathComponent("manifest.json")
                case .repository: local
                case .package: local.appendingPathExtension("sig")
                }
            return item
        }
    }

    /// The options a device needs to sync `item` as signed: `--trusted-key` for each key its
    /// document names, and `--identity` when it is signed for another name than a device at its
    /// URL expects (the URL's last path component; an index: its folder's name).
    static func pinning(_ item: Item) -> String {
        guard let document = item.document, let data = try? Data(contentsOf: document),
            let release = SignerContinuity.release(of: document.lastPathComponent, in: data),
            !release.signatures.isEmpty
        else { return "" }
        let keys = release.signatures.map { " --trusted-key \($0.key)" }.joined()
        let url = item.kind == .repository ? item.url.deletingLastPathComponent() : item.url
        let expected = url.path == "/" ? "/" : url.lastPathComponent
        guard let signed = release.identity, signed != expected else { return keys }
        return keys + " --identity \(shellWord(signed))"
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
            "  breeze sync \(item.url.absoluteString) DIR\(pinning(item))    (a \(item.kind.rawValue))"
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
