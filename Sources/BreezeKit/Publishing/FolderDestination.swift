package import Foundation
import FreshAir

/// A folder a web server serves (nginx's `root`, a mounted share).
///
/// Each file is written beside its place and renamed over it, so the server never sends half
/// a file, and an overwritten file's modification time moves past the old one's second
/// (``ServedFileTime``), so its `ETag` and `Last-Modified` change with it.
package struct FolderDestination: PublishDestination {
    /// The folder the web server serves this content from.
    package let root: URL

    package init(root: URL) { self.root = root.standardizedFileURL }

    package var description: String { root.path }

    /// Names of files being written; never listed, and removed if a publish is interrupted.
    static let temporaryMarker = ".breeze-publish-"

    package func list() async throws -> [String: PublishedObject] {
        guard FileManager.default.fileExists(atPath: root.path) else { return [:] }
        var objects: [String: PublishedObject] = [:]
        for file in try BundleFolder.files(in: root, includingHidden: true) {
            guard !file.path.contains(Self.temporaryMarker) else {
                // Left by a publish that was killed mid-copy: never live, and not to be served.
                try? FileManager.default.removeItem(at: root.appendingPathComponent(file.path))
                continue
            }
            objects[file.path] = PublishedObject(size: file.size, modified: file.modified)
        }
        return objects
    }

    package func holds(_ file: LocalFile, as object: PublishedObject) async throws -> Bool {
        guard object.size == file.size else { return false }
        let there = try FileDigests.digest(of: root.appendingPathComponent(file.path), using: .sha256).hash
        return there == (try FileDigests.digest(of: file.url, using: .sha256).hash)
    }

    package func upload(_ file: LocalFile, replacing existing: PublishedObject?) async throws -> Int64 {
        let target = root.appendingPathComponent(file.path)
        let folder = target.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let temporary = folder.appendingPathComponent(
            ".\(target.lastPathComponent)\(Self.temporaryMarker)\(UInt32.random(in: 0...UInt32.max))"
        )
        do {
            try FileManager.default.copyItem(at: file.url, to: temporary)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: temporary.path)
            try ServedFileTime.moveForward(temporary, past: existing?.modified)
            // rename(2): one step, so the server sends the old file or the new one.
            guard rename(temporary.path, target.path) == 0 else {
                throw PublishError(String(cString: strerror(errno)), kind: .local)
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw PublishError("could not write \(target.path): \(error.localizedDescription)", kind: .local)
        }
        return file.size
    }

    package func read(_ path: String) async throws -> Data? {
        let url = root.appendingPathComponent(path)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do { return try Data(contentsOf: url) } catch {
            throw PublishError("could not read \(url.path): \(error.localizedDescription)", kind: .local)
        }
    }

    package func located(at path: String) throws -> any PublishDestination {
        FolderDestination(root: root.appendingPathComponent(path, isDirectory: true))
    }

    package func delete(_ path: String) async throws {
        let target = root.appendingPathComponent(path)
        try FileManager.default.removeItem(at: target)
        // Folders left empty go too, up to the destination's root.
        var folder = target.deletingLastPathComponent().standardizedFileURL
        while folder.path.hasPrefix(root.path + "/"),
            (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true
        {
            try FileManager.default.removeItem(at: folder)
            folder = folder.deletingLastPathComponent().standardizedFileURL
        }
    }
}
