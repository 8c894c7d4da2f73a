import Crypto
package import Foundation
import FreshAir

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
                // One whose writer still runs is another publish's, under way.
                if !Self.isInFlight(file.path) {
                    try? FileManager.default.removeItem(at: root.appendingPathComponent(file.path))
                }
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
            ".\(target.lastPathComponent)\(Self.temporaryMarker)\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
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
            throw PublishError(
                "could not write \(target.path): \(FileErrorWords.reason(error) ?? "\(error)")",
                kind: .local
            )
        }
        return file.size
    }

    /// Whether the temporary file at `path` (`….breeze-publish-PID-RANDOM`) is being written by
    /// a process that still runs on this machine.
    static func isInFlight(_ path: String) -> Bool {
        guard let range = path.range(of: temporaryMarker, options: .backwards) else { return false }
        let tail = path[range.upperBound...]
        guard let dash = tail.firstIndex(of: "-"), let pid = pid_t(tail[..<dash]), pid > 0 else { return false }
        return kill(pid, 0) == 0 || errno == EPERM
    }

    package func readTagged(_ path: String) async throws -> TaggedObject? {
        try await read(path).map { TaggedObject(data: $0, tag: Self.tag(of: $0)) }
    }

    /// A file's tag: its bytes' SHA-256, which changes with them even within one second.
    static func tag(of data: Data) -> String { S3RequestSigner.hex(SHA256.hash(data: data)) }

    /// Compare and rename under an exclusive `flock(2)` on the file's folder, which every
    /// breeze writing a root there takes: two releases cannot both see the old root and both
    /// replace it.
    package func swap(_ file: LocalFile, expecting expected: String?) async throws -> Int64 {
        let target = root.appendingPathComponent(file.path)
        let folder = target.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw PublishError("could not open \(folder.path): \(String(cString: strerror(errno)))", kind: .local)
        }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else {
                throw PublishError("could not lock \(folder.path): \(String(cString: strerror(errno)))", kind: .local)
            }
        }
        let there = try await readTagged(file.path)
        guard there?.tag == expected else {
            throw PublishError("\(target.path) changed since this release read it", kind: .conflict)
        }
        let modified = (try? FileManager.default.attributesOfItem(atPath: target.path))?[.modificationDate] as? Date
        return try await upload(
            file,
            replacing: there.map { PublishedObject(size: Int64($0.data.count), modified: modified) }
        )
    }

    package func read(_ path: String) async throws -> Data? {
        let url = root.appendingPathComponent(path)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do { return try Data(contentsOf: url) } catch {
            throw PublishError(
                "could not read \(url.path): \(FileErrorWords.reason(error) ?? "\(error)")",
                kind: .local
            )
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
