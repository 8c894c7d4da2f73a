package import Foundation
package import FreshAir

/// `breeze generate --pack`: writes the bundle's small files into one plain `.tar` beside the
/// root manifest and names it there (`FilePack`), so a device's first sync takes them in one
/// request.
///
/// The pack holds every file a manifest of the bundle lists with a SHA-256 digest and a size
/// under ``FilePack/largestFile``, in path order, with fixed dates: the same files make the same
/// pack, and the same name, `files-<first 16 hex digits of its SHA-256>.freshairpack`. A CDN
/// may keep it for ever; a new pack gets a new name, and the older ones are removed. Child
/// manifests stay out of it: a sync reads them before it downloads any file.
package enum FilePackWriter {
    package struct Report: Sendable {
        /// The pack's path in the bundle, or `nil` when no file qualified (and none is named).
        package var path: String?
        package var files = 0
        package var bytes: Int64 = 0
        /// The root manifest's signatures no longer held (the pack changed) and were removed.
        package var signaturesRemoved = 0
    }

    /// The size of `pack`'s file in `bundle`, or `nil` when there is none.
    package static func sizeOnDisk(of pack: FilePack, in bundle: URL) -> Int64? {
        let path = bundle.appendingPathComponent(pack.path.string).path
        return ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value
    }

    /// Whether the root manifest of `bundle` names a pack (to keep current).
    package static func isNamed(in bundle: URL) -> Bool {
        (try? ManifestDocument(bundle: bundle.standardizedFileURL, folder: ""))?.json[FilePack.member] != nil
    }

    /// Removes the pack: its member, and every pack file beside the root manifest.
    package static func remove(in bundle: URL) throws -> Report {
        let root = bundle.standardizedFileURL
        try removePacks(in: root, keeping: nil)
        var report = Report()
        try name(nil, in: root, report: &report)
        return report
    }

    /// Packs `bundle`, whose manifests' digests must be current (run after ``BundleHasher``).
    package static func run(bundle: URL) throws -> Report {
        let root = bundle.standardizedFileURL
        var files: [(path: String, size: Int64)] = []
        var seen: Set<String> = []
        for document in try ManifestTreeOrder.postOrder(bundle: root) {
            for entry in document.entries {
                guard let filename = entry["filename"]?.string, !filename.hasSuffix("manifest.json"),
                    let digest = entry["sha"]?.string ?? entry["SHA"]?.string, digest.count == 64,
                    let size = entry["size"]?.integer, size < FilePack.largestFile
                else { continue }
                let path = document.bundlePath(of: filename)
                if seen.insert(path).inserted { files.append((path, size)) }
            }
        }
        files.sort { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
        var report = Report()
        let pack = try files.isEmpty ? nil : write(files, in: root, report: &report)
        try removePacks(in: root, keeping: pack?.path.string)
        try name(pack, in: root, report: &report)
        return report
    }

    private static func removePacks(in root: URL, keeping kept: String?) throws {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        where name.hasSuffix(FilePack.suffix) && name != kept {
            try FileManager.default.removeItem(at: root.appendingPathComponent(name))
        }
    }

    /// Writes the tar under a temporary name, then gives it its digest's.
    private static func write(
        _ files: [(path: String, size: Int64)],
        in root: URL,
        report: inout Report
    ) throws -> FilePack {
        let temporary = root.appendingPathComponent(".pack-in-progress" + FilePack.suffix)
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw PackagingError("could not create \(temporary.path)", kind: .cannotWrite)
        }
        var writer = TarWriter(sink: .plain(try FileHandle(forWritingTo: temporary)))
        for file in files {
            try writer.addFile(
                file.path,
                from: root.appendingPathComponent(file.path),
                size: file.size,
                modified: Date(timeIntervalSince1970: 0),
                executable: false
            )
            report.bytes += file.size
        }
        try writer.finish()
        report.files = files.count
        let (digest, size) = try ContentHash.ofFile(at: temporary, using: .sha256)
        let name = FilePack.name(digest: digest)
        let final = root.appendingPathComponent(name)
        if FileManager.default.fileExists(atPath: final.path) { try FileManager.default.removeItem(at: final) }
        try FileManager.default.moveItem(at: temporary, to: final)
        report.path = name
        return FilePack(path: try BundlePath(name), size: size)
    }

    /// Names `pack` in the root manifest (in the object form, which a bare list becomes), or
    /// removes the member when there is none; a change drops signatures that no longer hold.
    private static func name(_ pack: FilePack?, in root: URL, report: inout Report) throws {
        var document = try ManifestDocument(bundle: root, folder: "")
        if case .array(let entries) = document.json {
            guard pack != nil else { return }
            document.json = .object([("format", .number("2")), ("files", .array(entries))])
        }
        let before = document.json[FilePack.member]
        if let pack {
            document.json.set(FilePack.member, pack.json, after: "files")
        } else {
            document.json.remove(FilePack.member)
        }
        guard document.json[FilePack.member] != before else { return }
        if let signatures = document.json[ManifestSignature.member]?.array {
            document.json.remove(ManifestSignature.member)
            report.signaturesRemoved = signatures.count
        }
        try document.save()
    }
}
