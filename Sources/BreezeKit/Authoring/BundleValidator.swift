import Foundation
import FreshAir

/// `breeze validate`: every problem in a bundle, each naming the file (and entry, key,
/// language, line and column where they apply).
///
/// Errors: a manifest or release-notes file that is not JSON or not of the expected shape,
/// an unsafe path, a condition that does not parse, a listed file that is missing or whose
/// digest or size differs, a link leaving the bundle, a `.strings` file that does not parse,
/// a feature without `<key>.title` or `<key>.description` in a language the bundle has, or
/// without an image, a root manifest past its `expires` date. Warnings: files on disk that no
/// manifest lists, a root manifest expiring within a week.
public enum BundleValidator {
    public struct Problem: Sendable, Hashable, Codable, CustomStringConvertible {
        public enum Severity: String, Sendable, Codable { case error, warning }
        public var severity: Severity
        /// The file concerned, relative to the bundle.
        public var file: String
        public var message: String
        public var key: String?
        public var language: String?

        public var description: String {
            let details = [key.map { "key \($0)" }, language.map { "language \($0)" }].compactMap { $0 }
            return "\(severity.rawValue): \(file): \(message)" + (details.isEmpty ? "" : " (\(details.joined(separator: ", ")))")
        }
    }

    public static func run(bundle: URL) async -> [Problem] {
        let root = bundle.standardizedFileURL.resolvingSymlinksInPath()
        var problems: [Problem] = []
        var listed: Set<String> = []
        checkManifest(root: root, folder: "", depth: 0, problems: &problems, listed: &listed)
        checkReleaseNotes(root: root, problems: &problems)
        checkStringsFiles(root: root, problems: &problems)
        let onDisk = (try? BundleFolder.files(in: root).map(\.path)) ?? []
        for path in onDisk where !listed.contains(path) && !isAuthoringOnly(path) {
            problems.append(Problem(severity: .warning, file: path, message: "on disk but in no manifest: devices will not get it (run `breeze generate`)"))
        }
        return problems
    }

    /// Files the authoring tools keep beside content: manifests and asset-catalog metadata.
    static func isAuthoringOnly(_ path: String) -> Bool {
        path == "manifest.json" || (path.hasSuffix("Contents.json") && path.contains(".xcassets/"))
    }

    private static func relative(_ folder: String, _ name: String) -> String { folder.isEmpty ? name : "\(folder)/\(name)" }

    private static func checkManifest(root: URL, folder: String, depth: Int, problems: inout [Problem], listed: inout Set<String>) {
        let manifestPath = relative(folder, "manifest.json")
        listed.insert(manifestPath)
        guard let data = try? Data(contentsOf: root.appendingPathComponent(manifestPath)) else {
            problems.append(Problem(severity: .error, file: manifestPath, message: "missing (run `breeze generate`)"))
            return
        }
        let manifest: Manifest
        do { manifest = try Manifest(data: data, source: manifestPath) } catch {
            problems.append(Problem(severity: .error, file: manifestPath, message: error.detail))
            return
        }
        if depth == 0, let expires = manifest.expires {
            // Devices refuse an expired root manifest; a week's notice before that.
            if expires < Date() {
                problems.append(Problem(severity: .error, file: manifestPath, message: "expired at \(expires.formatted(.iso8601)): devices will refuse it; set a later \"expires\""))
            } else if expires < Date().addingTimeInterval(7 * 86_400) {
                problems.append(Problem(severity: .warning, file: manifestPath, message: "expires at \(expires.formatted(.iso8601)), within a week: publish a fresh manifest before then"))
            }
        }
        if depth == 0, !manifest.signatures.isEmpty {
            checkSignatures(manifest, file: manifestPath, problems: &problems)
        }
        let prefix = folder.isEmpty ? nil : try? BundlePath(folder)
        for (index, entry) in manifest.entries.enumerated() {
            let path = prefix.map { $0.appending(entry.path).string } ?? entry.path.string
            listed.insert(path)
            let url = root.appendingPathComponent(path)
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: url.path) {
                let resolved = url.deletingLastPathComponent().appendingPathComponent(target).standardizedFileURL.path
                if target.hasPrefix("/") || !resolved.hasPrefix(root.path + "/") {
                    problems.append(Problem(severity: .error, file: path, message: "entry \(index) is a link to \(target), outside the bundle"))
                    continue
                }
            }
            guard FileManager.default.fileExists(atPath: url.path) else {
                problems.append(Problem(severity: .error, file: manifestPath, message: "entry \(index) (\"\(entry.path)\"): the file does not exist"))
                continue
            }
            if entry.hash != nil || entry.size != nil, let (digest, size) = try? ContentHash.ofFile(at: url, using: entry.hash?.algorithm ?? .sha256) {
                if let expected = entry.hash, expected != digest {
                    problems.append(Problem(severity: .error, file: manifestPath, message: "entry \(index) (\"\(entry.path)\"): digest is stale (run `breeze hash`)"))
                } else if let expected = entry.size, expected != size {
                    problems.append(Problem(severity: .error, file: manifestPath, message: "entry \(index) (\"\(entry.path)\"): size \(expected) is stale, the file has \(size) bytes"))
                }
            }
            if entry.isChildManifest {
                guard depth < 8 else {
                    problems.append(Problem(severity: .error, file: path, message: "child manifests nest deeper than 8 levels"))
                    continue
                }
                checkManifest(root: root, folder: entry.path.parent.map { relative(folder, $0.string) } ?? folder, depth: depth + 1, problems: &problems, listed: &listed)
            }
        }
    }

    /// Every signature must match the content: a stale one means the bundle changed after
    /// `breeze sign`, and devices pinning that key would refuse it.
    private static func checkSignatures(_ manifest: Manifest, file: String, problems: inout [Problem]) {
        for message in ManifestSigner.signatureProblems(manifest) {
            problems.append(Problem(severity: .error, file: file, message: message))
        }
    }

    private static func checkReleaseNotes(root: URL, problems: inout [Problem]) {
        let path = "release_notes.json"
        guard let data = try? Data(contentsOf: root.appendingPathComponent(path)) else { return }
        let notes: ReleaseNotes
        do { notes = try ReleaseNotes(data: data, source: path) } catch {
            problems.append(Problem(severity: .error, file: path, message: error.detail))
            return
        }
        let languages = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [])
            .filter { $0.hasSuffix(".lproj") && $0 != "Base.lproj" }.map { String($0.dropLast(6)) }.sorted()
        let content = ContentBundle(root: root, preferredLocalizations: [])
        for key in Set(notes.releases.flatMap(\.features)).sorted() {
            for language in languages {
                let tables = ["Feature", "Localizable"].compactMap { try? content.stringsTable(named: $0, localization: language) }
                for suffix in ["title", "description"] where !tables.contains(where: { $0.strings["\(key).\(suffix)"] != nil }) {
                    problems.append(Problem(severity: .error, file: "\(language).lproj/Feature.strings",
                                            message: "no text for feature \(key)'s \(suffix)", key: "\(key).\(suffix)", language: language))
                }
            }
            if content.imageURL(named: key) == nil {
                problems.append(Problem(severity: .error, file: path, message: "feature \(key) has no image named \(key)", key: key))
            }
        }
    }

    private static func checkStringsFiles(root: URL, problems: inout [Problem]) {
        for path in ((try? BundleFolder.files(in: root))?.map(\.path) ?? []) where path.hasSuffix(".strings") {
            guard let data = try? Data(contentsOf: root.appendingPathComponent(path)) else { continue }
            do { _ = try StringsTable(stringsFile: data, source: path) } catch {
                problems.append(Problem(severity: .error, file: path, message: "line \(error.line): \(error.message)"))
            }
        }
    }
}
