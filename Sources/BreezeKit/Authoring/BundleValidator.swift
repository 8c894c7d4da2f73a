package import Foundation
import FreshAir

/// `breeze validate`: every problem in a bundle, each naming the file (and entry, key,
/// language, line and column where they apply).
///
/// Errors: a manifest or release-notes file that is not JSON or not of the expected shape,
/// an unsafe path, a condition that does not parse, a listed file that is missing or whose
/// digest or size differs, a link leaving the bundle, a `.strings` file that does not parse,
/// a feature without `<key>.title` or `<key>.description` in a language the bundle has, or
/// without an image, a root manifest past its `expires` date, an entry with an unreadable digest
/// or size that a device the bundle targets could select. Warnings: files on disk that no
/// manifest lists, a root manifest expiring within a week, keys FreshAir does not read, an
/// unreadable entry that only platforms the bundle never names would select.
package enum BundleValidator {
    package struct Problem: Sendable, Hashable, Codable, CustomStringConvertible {
        package enum Severity: String, Sendable, Codable { case error, warning }
        package var severity: Severity
        /// The file concerned, relative to the bundle.
        package var file: String
        package var message: String
        package var key: String?
        package var language: String?

        package var description: String {
            let details = [key.map { "key \($0)" }, language.map { "language \($0)" }].compactMap { $0 }
            return "\(severity.rawValue): \(file): \(message)"
                + (details.isEmpty ? "" : " (\(details.joined(separator: ", ")))")
        }
    }

    package static func run(bundle: URL) async -> [Problem] {
        let root = bundle.standardizedFileURL.resolvingSymlinksInPath()
        var walk = ManifestWalk()
        checkManifest(root: root, folder: "", depth: 0, walk: &walk)
        var problems = walk.problems + walk.defectProblems() + imageGaps(walk.images) + treeLimits(walk)
        checkReleaseNotes(root: root, problems: &problems)
        checkPresentation(root: root, problems: &problems)
        checkStringsFiles(root: root, problems: &problems)
        checkPack(root: root, problems: &problems)
        let onDisk = (try? BundleFolder.files(in: root).map(\.path)) ?? []
        for path in onDisk
        where !walk.listed.contains(path) && !isAuthoringOnly(path) && !walk.isUnderUnreadableManifest(path) {
            problems.append(
                Problem(
                    severity: .warning,
                    file: path,
                    message: "on disk but in no manifest: devices will not get it (run `breeze generate`)"
                )
            )
        }
        return problems
    }

    /// Warnings for a bundle past what a device accepts by default: every device refuses it
    /// unless its app raises the limit (a warning, since an app may).
    private static func treeLimits(_ walk: ManifestWalk) -> [Problem] {
        let limits = SyncConfiguration()
        var problems: [Problem] = []
        if walk.entries > limits.maxManifestEntries {
            problems.append(
                beyondDefault(
                    file: "manifest.json",
                    "and its children list \(walk.entries) entries",
                    "maxManifestEntries",
                    limits.maxManifestEntries
                )
            )
        }
        if walk.manifestBytes > limits.maxManifestTreeSize {
            problems.append(
                beyondDefault(
                    file: "manifest.json",
                    "and its children are \(walk.manifestBytes) bytes",
                    "maxManifestTreeSize",
                    limits.maxManifestTreeSize
                )
            )
        }
        if let (path, size) = walk.largestFile, size > limits.maxFileSize {
            problems.append(beyondDefault(file: path, "is \(size) bytes", "maxFileSize", Int(limits.maxFileSize)))
        }
        return problems
    }

    private static func beyondDefault(file: String, _ what: String, _ limit: String, _ value: Int) -> Problem {
        Problem(
            severity: .warning,
            file: file,
            message:
                "\(what), past the \(value) devices accept by default: they refuse it unless the app raises SyncConfiguration.\(limit)"
        )
    }

    /// What the walk over a bundle's manifests gathers before entries can be judged.
    private struct ManifestWalk {
        var problems: [Problem] = []
        var listed: Set<String> = []
        /// Folders whose manifest could not be read: their files are not "in no manifest".
        var unreadableFolders: [String] = []
        /// Entries whose digest or size could not be read, judged once every platform is known.
        var defects: [(manifest: String, index: Int, entry: ManifestEntry)] = []
        /// The platforms the bundle's conditions name: the devices it is meant for.
        var platforms: Set<String> = []
        /// The images listed and the conditions of their variants.
        var images = ImageCoverage()
        /// The manifests' bytes and entries, and the largest file listed, for the limits a
        /// device applies by default (``SyncConfiguration``).
        var manifestBytes = 0
        var entries = 0
        var largestFile: (path: String, size: Int64)?

        func isUnderUnreadableManifest(_ path: String) -> Bool {
            unreadableFolders.contains { $0.isEmpty || path.hasPrefix($0 + "/") }
        }

        /// A broken entry is an error when some device the bundle targets could select it (that
        /// device would refuse the manifest), else a warning: only a platform the bundle never
        /// names would select it.
        func defectProblems() -> [Problem] {
            let known =
                platforms.isEmpty
                ? [ConditionEnvironment()] : platforms.sorted().map { ConditionEnvironment(["platform": .string($0)]) }
            return defects.map { defect in
                let described = "entry \(defect.index) (\"\(defect.entry.path)\"): \(defect.entry.defect!)"
                if known.contains(where: { defect.entry.condition.evaluate(knowing: $0) != false }) {
                    return Problem(
                        severity: .error,
                        file: defect.manifest,
                        message: "\(described); devices that select it refuse the manifest"
                    )
                }
                return Problem(
                    severity: .warning,
                    file: defect.manifest,
                    message:
                        "\(described); no platform this bundle names (\(platforms.sorted().joined(separator: ", "))) selects it, "
                        + "so only another platform's devices would refuse the manifest"
                )
            }
        }
    }

    /// A warning per image that some device gets no variant of: scales named together
    /// (`1x, 2x, 3x`) per device.
    private static func imageGaps(_ images: ImageCoverage) -> [Problem] {
        var scales: [String: [Int]] = [:]
        var order: [String] = []
        for gap in images.gaps() {
            let key = "\(gap.image)\u{0}\(gap.device)"
            if scales[key] == nil { order.append(key) }
            scales[key, default: []].append(gap.scale)
        }
        return order.map { key in
            let parts = key.split(separator: "\u{0}").map(String.init)
            let at = scales[key]!.map { "\($0)x" }.joined(separator: ", ")
            return Problem(
                severity: .warning,
                file: parts[0],
                message:
                    "no variant of this image is selected on \(parts[1]) at \(at): that device shows no image "
                    + "(add one, or loosen a variant's condition; `breeze generate` writes conditions that cover every scale)"
            )
        }
    }

    /// Files the authoring tools keep beside content: manifests and asset-catalog metadata.
    static func isAuthoringOnly(_ path: String) -> Bool {
        path == "manifest.json" || (path.hasSuffix("Contents.json") && path.contains(".xcassets/"))
            || (path.hasSuffix(FilePack.suffix) && !path.contains("/"))
    }

    /// The pack the root manifest names is beside it, of the size it says.
    private static func checkPack(root: URL, problems: inout [Problem]) {
        guard let data = try? Data(contentsOf: root.appendingPathComponent("manifest.json")),
            let manifest = try? Manifest(data: data, source: "manifest.json"), let pack = manifest.pack
        else { return }
        let found = FilePackWriter.sizeOnDisk(of: pack, in: root)
        guard found != pack.size else { return }
        problems.append(
            Problem(
                severity: .error,
                file: "manifest.json",
                message: "its pack \(pack.path) "
                    + (found.map { "is \($0) bytes, not \(pack.size)" } ?? "is missing")
                    + ": run `breeze generate` to write it again (devices would fetch every file alone)"
            )
        )
    }

    private static func relative(_ folder: String, _ name: String) -> String {
        folder.isEmpty ? name : "\(folder)/\(name)"
    }

    /// Devices refuse an expired root manifest (or package document): an error then, and a
    /// week's notice before. `renewal` says what to do (a manifest's words when `nil`).
    static func expiryProblems(_ expires: Date, file: String, now: Date, renewal: String? = nil) -> [Problem] {
        if expires < now {
            return [
                Problem(
                    severity: .error,
                    file: file,
                    message:
                        "expired at \(expires.formatted(.iso8601)): devices will refuse it; \(renewal ?? "set a later \"expires\"")"
                )
            ]
        }
        guard expires < now.addingTimeInterval(7 * 86_400) else { return [] }
        return [
            Problem(
                severity: .warning,
                file: file,
                message:
                    "expires at \(expires.formatted(.iso8601)), within a week: \(renewal ?? "publish a fresh manifest") before then"
            )
        ]
    }

    /// What is wrong with the file that entry `index` of `manifestPath` names at `path`, if
    /// anything; `stop` when there is nothing more to look into (a link out of the bundle, no
    /// file). A stale digest or size is reported and the entry looked into further.
    private static func fileProblem(
        _ entry: ManifestEntry,
        index: Int,
        path: String,
        root: URL,
        manifest manifestPath: String
    ) -> (problem: Problem, stop: Bool)? {
        let url = root.appendingPathComponent(path)
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: url.path) {
            let resolved = url.deletingLastPathComponent().appendingPathComponent(target).standardizedFileURL.path
            if target.hasPrefix("/") || !resolved.hasPrefix(root.path + "/") {
                let message = "entry \(index) is a link to \(target), outside the bundle"
                return (Problem(severity: .error, file: path, message: message), true)
            }
        }
        guard FileManager.default.fileExists(atPath: url.path) else {
            let message = "entry \(index) (\"\(entry.path)\"): the file does not exist"
            return (Problem(severity: .error, file: manifestPath, message: message), true)
        }
        guard entry.hash != nil || entry.size != nil,
            let (digest, size) = try? FileDigests.digest(of: url, using: entry.hash?.algorithm ?? .sha256)
        else { return nil }
        if let expected = entry.hash, expected != digest {
            let message = "entry \(index) (\"\(entry.path)\"): digest is stale (run `breeze hash`)"
            return (Problem(severity: .error, file: manifestPath, message: message), false)
        }
        if let expected = entry.size, expected != size {
            let message = "entry \(index) (\"\(entry.path)\"): size \(expected) is stale, the file has \(size) bytes"
            return (Problem(severity: .error, file: manifestPath, message: message), false)
        }
        return nil
    }

    private static func checkManifest(root: URL, folder: String, depth: Int, walk: inout ManifestWalk) {
        let manifestPath = relative(folder, "manifest.json")
        walk.listed.insert(manifestPath)
        guard let data = try? Data(contentsOf: root.appendingPathComponent(manifestPath)) else {
            walk.problems.append(
                Problem(severity: .error, file: manifestPath, message: "missing (run `breeze generate`)")
            )
            return
        }
        walk.manifestBytes += data.count
        let limits = SyncConfiguration()
        if data.count > limits.maxDocumentSize {
            walk.problems.append(
                beyondDefault(file: manifestPath, "is \(data.count) bytes", "maxDocumentSize", limits.maxDocumentSize)
            )
        }
        let manifest: Manifest
        do { manifest = try Manifest(data: data, source: manifestPath) } catch {
            walk.problems.append(Problem(severity: .error, file: manifestPath, message: error.detail))
            walk.unreadableFolders.append(folder)
            return
        }
        if let document = try? JSONReader.parse(data) {
            walk.problems += unknownMembers(ofManifest: document, file: manifestPath)
        }
        if depth == 0, let expires = manifest.expires {
            walk.problems += expiryProblems(expires, file: manifestPath, now: Date())
        }
        if depth == 0, !manifest.signatures.isEmpty {
            checkSignatures(manifest, file: manifestPath, problems: &walk.problems)
        }
        let prefix = folder.isEmpty ? nil : try? BundlePath(folder)
        for (index, entry) in manifest.entries.enumerated() {
            let path = prefix.map { $0.appending(entry.path).string } ?? entry.path.string
            walk.listed.insert(path)
            walk.entries += 1
            if let size = entry.size, size > walk.largestFile?.size ?? 0 { walk.largestFile = (path, size) }
            walk.platforms.formUnion(entry.condition.values(comparedWith: "platform"))
            walk.images.add(path: path, condition: entry.condition)
            if entry.defect != nil { walk.defects.append((manifestPath, index, entry)) }
            if let (problem, stop) = fileProblem(entry, index: index, path: path, root: root, manifest: manifestPath) {
                walk.problems.append(problem)
                if stop { continue }
            }
            if entry.isChildManifest {
                guard depth < 8 else {
                    walk.problems.append(
                        Problem(severity: .error, file: path, message: "child manifests nest deeper than 8 levels")
                    )
                    continue
                }
                checkManifest(
                    root: root,
                    folder: entry.path.parent.map { relative(folder, $0.string) } ?? folder,
                    depth: depth + 1,
                    walk: &walk
                )
            }
        }
    }

    /// Warnings for members FreshAir does not read, in the root object, entries and their
    /// `conditions`: a misspelt key is silently ignored by every device.
    private static func unknownMembers(ofManifest document: JSONValue, file: String) -> [Problem] {
        var problems: [Problem] = []
        let entries: [JSONValue]
        if let array = document.array {
            entries = array
        } else {
            problems += unknownMembers(of: document, known: Manifest.knownMembers, file: file, at: "the manifest")
            entries = document["files"]?.array ?? []
        }
        for (index, entry) in entries.enumerated() {
            problems += unknownMembers(of: entry, known: ManifestEntry.knownMembers, file: file, at: "entry \(index)")
            for (number, requirement) in (entry["conditions"]?.array ?? []).enumerated() {
                problems += unknownMembers(
                    of: requirement,
                    known: ManifestEntry.knownRequirementMembers,
                    file: file,
                    at: "entry \(index), conditions[\(number)]"
                )
            }
        }
        return problems
    }

    private static func unknownMembers(
        of object: JSONValue,
        known: Set<String>,
        file: String,
        at place: String
    ) -> [Problem] {
        (object.pairs ?? []).filter { !known.contains($0.key) }.map { member in
            Problem(
                severity: .warning,
                file: file,
                message: "\(place): unknown key \"\(member.key)\", which FreshAir ignores (a misspelling?)",
                key: member.key
            )
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
        if let document = try? JSONReader.parse(data, lenient: true) {
            problems += unknownMembers(
                of: document,
                known: ReleaseNotes.knownMembers,
                file: path,
                at: "the release notes"
            )
            for (index, release) in (document["releases"]?.array ?? []).enumerated() {
                problems += unknownMembers(
                    of: release,
                    known: ReleaseNotes.knownReleaseMembers,
                    file: path,
                    at: "releases[\(index)]"
                )
            }
        }
        let languages = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [])
            .filter { $0.hasSuffix(".lproj") && $0 != "Base.lproj" }.map { String($0.dropLast(6)) }.sorted()
        let content = ContentBundle(root: root, preferredLocalizations: [])
        for key in Set(notes.releases.flatMap(\.features)).sorted() {
            for language in languages {
                var unreadable = false
                let tables = ["Feature", "Localizable"].compactMap { name -> StringsTable? in
                    do { return try content.stringsTable(named: name, localization: language) } catch {
                        unreadable = true
                        return nil
                    }
                }
                // A table that does not parse is reported once, where it fails; its keys are not
                // also reported missing.
                if unreadable { continue }
                for suffix in ["title", "description"]
                where !tables.contains(where: { $0.strings["\(key).\(suffix)"] != nil }) {
                    problems.append(
                        Problem(
                            severity: .error,
                            file: "\(language).lproj/Feature.strings",
                            message: "no text for feature \(key)'s \(suffix)",
                            key: "\(key).\(suffix)",
                            language: language
                        )
                    )
                }
            }
            if content.imageURL(named: key) == nil {
                problems.append(
                    Problem(severity: .error, file: path, message: "feature \(key) has no image named \(key)", key: key)
                )
            }
        }
    }

    private static func checkPresentation(root: URL, problems: inout [Problem]) {
        let path = "presentation.json"
        guard let data = try? Data(contentsOf: root.appendingPathComponent(path)) else { return }
        do { _ = try Presentation(data: data, source: path) } catch {
            problems.append(Problem(severity: .error, file: path, message: error.detail))
            return
        }
        if let document = try? JSONReader.parse(data, lenient: true) {
            problems += unknownMembers(
                of: document,
                known: Presentation.knownMembers,
                file: path,
                at: "the presentation"
            )
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
