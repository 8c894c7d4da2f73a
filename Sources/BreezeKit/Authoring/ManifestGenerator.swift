package import Foundation
import FreshAir

/// `breeze generate`: writes or updates `manifest.json` from the folder.
///
/// Entries already in the manifest keep their place, field names and hand-written
/// conditions; files no longer on disk are dropped; new files are appended in path order with
/// the condition their place implies (see ``ConditionInference``) and, for a feature's images
/// (named after a key in `release_notes.json`), that release's conditions, so a device only
/// downloads images of features it will show. A `*.freshair/` subfolder becomes a child
/// manifest, generated the same way. Digests and sizes are then computed by ``BundleHasher``.
package enum ManifestGenerator {
    package struct Report: Sendable {
        package var manifests: [String] = []
        package var added: [String] = []
        package var removed: [String] = []
        package var hash = BundleHasher.Report()
        /// The pack written (or removed), when there is one to keep current.
        package var pack: FilePackWriter.Report?
    }

    /// - Parameters:
    ///   - developmentLanguage: its `.lproj` is every device's fallback, so it gets no
    ///     language condition.
    ///   - pack: write a pack of the small files (`FilePackWriter`), or remove it (`false`);
    ///     `nil` keeps the one the root manifest names current, and makes none.
    package static func run(
        bundle: URL,
        sha256: Bool = false,
        developmentLanguage: String = "en",
        movesSequence: Bool = true,
        pack: Bool? = nil
    ) async throws -> Report {
        let root = bundle.standardizedFileURL
        try DeviceFileNames.check(try BundleFolder.files(in: root), in: root)
        var report = Report()
        try generate(root: root, folder: "", developmentLanguage: developmentLanguage, report: &report)
        report.hash = try await BundleHasher.run(bundle: root, sha256: sha256, movesSequence: movesSequence)
        if pack == false {
            report.pack = try FilePackWriter.remove(in: root)
        } else if pack == true || FilePackWriter.isNamed(in: root) {
            report.pack = try FilePackWriter.run(bundle: root)
        }
        report.hash.signaturesRemoved += report.pack?.signaturesRemoved ?? 0
        return report
    }

    private static func generate(root: URL, folder: String, developmentLanguage: String, report: inout Report) throws {
        let folderURL = folder.isEmpty ? root : root.appendingPathComponent(folder)
        let allFiles = try BundleFolder.files(in: folderURL).map(\.path)
        // Files in a nested .freshair folder belong to its own manifest.
        let childFolders = Set(
            allFiles.compactMap { path -> String? in
                let parts = path.split(separator: "/")
                return parts.firstIndex { $0.hasSuffix(".freshair") }.map { parts[...$0].joined(separator: "/") }
            }
        )
        for child in childFolders.sorted() {
            try generate(
                root: root,
                folder: folder.isEmpty ? child : "\(folder)/\(child)",
                developmentLanguage: developmentLanguage,
                report: &report
            )
        }
        let assets = AssetCatalog.imageInfo(in: folderURL, files: allFiles)
        let own =
            allFiles.filter { path in
                path != "manifest.json" && !path.hasSuffix(FilePack.suffix)
                    && !childFolders.contains { path.hasPrefix($0 + "/") }
                    && !(path.hasSuffix("/Contents.json") && path.contains(".xcassets/"))
            } + childFolders.sorted().map { "\($0)/manifest.json" }
        let features = try featureConditions(in: folderURL)
        let siblings = Set(own)

        var document =
            FileManager.default.fileExists(atPath: folderURL.appendingPathComponent("manifest.json").path)
            ? try ManifestDocument(bundle: root, folder: folder) : ManifestDocument(newAt: root, folder: folder)
        var entries: [JSONValue] = []
        var listed: Set<String> = []
        for entry in document.entries {
            guard let filename = entry["filename"]?.string else { continue }
            if siblings.contains(filename) {
                entries.append(entry)
                listed.insert(filename)
            } else {
                report.removed.append(document.bundlePath(of: filename))
            }
        }
        for path in own where !listed.contains(path) {
            var pairs: [(key: String, value: JSONValue)] = [("filename", .string(path))]
            let inferred = ConditionInference.condition(
                for: path,
                siblings: siblings,
                assetInfo: assets[path],
                developmentLanguage: developmentLanguage
            )
            let feature = ImageFileName(URL(fileURLWithPath: path).lastPathComponent).flatMap { features[$0.base] }
            let clauses = [feature.map { "(\($0))" }, inferred].compactMap { $0 }
            if !clauses.isEmpty { pairs.append(("condition", .string(clauses.joined(separator: " && ")))) }
            entries.append(.object(pairs))
            report.added.append(document.bundlePath(of: path))
        }
        document.entries = entries
        if try document.save() {
            report.manifests.append(document.url.path)
        }
    }

    /// Feature key → the condition of the release that introduced it (as condition text).
    static func featureConditions(in folder: URL) throws -> [String: String] {
        let url = folder.appendingPathComponent("release_notes.json")
        guard let data = try? Data(contentsOf: url) else { return [:] }
        let object: JSONValue
        do { object = try JSONValue.parse(data) } catch {
            throw PackagingError("\(url.path): \(error) (`breeze validate` lists every problem)", kind: .content)
        }
        guard case .array(let releases)? = object["releases"] else { return [:] }
        var result: [String: String] = [:]
        for release in releases {
            var clauses: [String] = []
            if let text = release["condition"]?.string, !text.isEmpty { clauses.append("(\(text))") }
            if case .array(let requirements)? = release["conditions"] {
                for requirement in requirements {
                    guard let key = requirement["key"]?.string else { continue }
                    let value: String =
                        switch requirement["value"] {
                        case .string(let text)?: "'\(text)'"
                        case .number(let text)?: text
                        case .bool(let flag)?: flag ? "true" : "false"
                        default: "nil"
                        }
                    let op = ComparisonOperator(jsonName: requirement["comparison"]?.string ?? "gte")?.rawValue ?? ">="
                    clauses.append("\(key) \(op) \(value)")
                }
            }
            guard case .array(let features)? = release["features"], !clauses.isEmpty else { continue }
            for case .string(let key) in features where result[key] == nil {
                result[key] = clauses.joined(separator: " && ")
            }
        }
        return result
    }
}
