import Foundation
import FreshAir

/// A `manifest.json` being edited: its entries as written (order, field names, conditions),
/// and where it sits in the bundle.
struct ManifestDocument {
    /// The manifest's folder, relative to the bundle root ("" for the root).
    let folder: String
    let url: URL
    var json: JSONValue
    let indent: Int
    let original: Data

    init(bundle: URL, folder: String) throws {
        self.folder = folder
        url = bundle.appendingPathComponent(folder.isEmpty ? "manifest.json" : "\(folder)/manifest.json")
        original = try Data(contentsOf: url)
        do { json = try JSONReader.parse(original) } catch {
            throw ManifestError(source: url.path, problem: .invalidJSON(error))
        }
        indent = JSONValue.indentation(of: original)
    }

    /// A new, empty manifest (legacy array form).
    init(newAt bundle: URL, folder: String) {
        self.folder = folder
        url = bundle.appendingPathComponent(folder.isEmpty ? "manifest.json" : "\(folder)/manifest.json")
        json = .array([])
        indent = 2
        original = Data()
    }

    /// The entries array, wherever the form keeps it.
    var entries: [JSONValue] {
        get {
            if case .array(let items) = json { return items }
            if case .array(let items)? = json["files"] { return items }
            return []
        }
        set {
            if case .array = json { json = .array(newValue) } else { json.set("files", .array(newValue)) }
        }
    }

    /// Bundle-relative path of an entry's file.
    func bundlePath(of filename: String) -> String { folder.isEmpty ? filename : "\(folder)/\(filename)" }

    var serialized: Data {
        var bytes = json.serializedBytes(indent: indent)
        bytes.append(UInt8(ascii: "\n"))
        return Data(bytes)
    }

    /// Writes the manifest (or `data`, its bytes already serialized) if it changed; returns
    /// whether it did.
    @discardableResult
    func save(_ data: Data? = nil) throws -> Bool {
        let data = data ?? serialized
        guard data != original else { return false }
        try data.write(to: url, options: .atomic)
        return true
    }

    /// Folders of the child manifests this one lists, relative to the bundle root.
    var childFolders: [String] {
        // The suffix test first: validating every one of thousands of paths would cost more.
        entries.compactMap { $0["filename"]?.string }
            .filter { $0.hasSuffix(BundlePath.childManifestSuffix) }
            .compactMap { try? BundlePath($0).parent }
            .map { bundlePath(of: $0.string) }
    }
}

/// Every manifest of a bundle, children before their parents.
enum ManifestTreeOrder {
    static func postOrder(bundle: URL) throws -> [ManifestDocument] {
        var result: [ManifestDocument] = []
        var visiting: Set<String> = []
        func visit(_ folder: String, depth: Int) throws {
            guard depth < 16, visiting.insert(folder).inserted else {
                throw PackagingError("child manifests nest too deep or form a cycle at \(folder)", kind: .content)
            }
            let document = try ManifestDocument(bundle: bundle, folder: folder)
            for child in document.childFolders
            where FileManager.default.fileExists(atPath: bundle.appendingPathComponent("\(child)/manifest.json").path) {
                try visit(child, depth: depth + 1)
            }
            result.append(document)
        }
        try visit("", depth: 0)
        return result
    }
}
