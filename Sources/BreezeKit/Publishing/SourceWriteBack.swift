import Foundation
import FreshAir

/// What a successful release wrote into its working copy (generated and signed manifests, a
/// package's `.sig`, chunk indexes, a pack), carried back into the source folder. A release
/// works on a copy whose files are links to the source's, so the source changes only once
/// the release is published: a refused, failed or interrupted release leaves it as it was.
enum SourceWriteBack {
    /// Makes `source` hold what `working` holds: each file that is no longer the source's own
    /// (a tool renamed a new one over the link) is linked (or copied) beside its place and
    /// renamed over it; files the working copy no longer has are removed.
    static func apply(from working: URL, to source: URL) throws {
        var isFolder: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: working.path, isDirectory: &isFolder)
        guard isFolder.boolValue else {
            for suffix in ["", PackageSignature.suffix, ChunkIndex.suffix] {
                try carry(URL(fileURLWithPath: working.path + suffix), to: URL(fileURLWithPath: source.path + suffix))
            }
            return
        }
        let kept = Set(try files(under: working))
        for relative in kept {
            try carry(working.appendingPathComponent(relative), to: source.appendingPathComponent(relative))
        }
        for relative in try files(under: source) where !kept.contains(relative) {
            try FileManager.default.removeItem(at: source.appendingPathComponent(relative))
        }
    }

    /// The regular files under `folder`, relative to it.
    private static func files(under folder: URL) throws -> [String] {
        var found: [String] = []
        let walker = FileManager.default.enumerator(atPath: folder.path)
        while let relative = walker?.nextObject() as? String {
            if (walker?.fileAttributes?[.type] as? FileAttributeType) == .typeRegular { found.append(relative) }
        }
        return found
    }

    /// Puts `file` at `place` unless `place` is already the same file (the link the copy made).
    private static func carry(_ file: URL, to place: URL) throws {
        let manager = FileManager.default
        guard let attributes = try? manager.attributesOfItem(atPath: file.path) else {
            // Gone from the working copy: a package's chunk index that signing dropped.
            if manager.fileExists(atPath: place.path) { try manager.removeItem(at: place) }
            return
        }
        let identity = { (attributes: [FileAttributeKey: Any]) in
            [attributes[.systemNumber] as? NSNumber, attributes[.systemFileNumber] as? NSNumber]
        }
        if let there = try? manager.attributesOfItem(atPath: place.path), identity(there) == identity(attributes) {
            return
        }
        try manager.createDirectory(at: place.deletingLastPathComponent(), withIntermediateDirectories: true)
        let temporary = place.deletingLastPathComponent().appendingPathComponent(
            ".\(place.lastPathComponent).breeze-\(UUID().uuidString)"
        )
        do { try manager.linkItem(at: file, to: temporary) } catch { try manager.copyItem(at: file, to: temporary) }
        guard rename(temporary.path, place.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? manager.removeItem(at: temporary)
            throw PublishError("published, but could not update \(place.path): \(reason)", kind: .local)
        }
    }
}
