package import Foundation
import FreshAir

/// What a successful release wrote into its working copy (generated and signed manifests, a
/// package's `.sig`, chunk indexes, a pack), carried back into the source folder. A release
/// works on a copy whose files are links to the source's, so the source changes only once
/// the release is published: a refused, failed or interrupted release leaves it as it was.
///
/// Only what the release's own tools changed goes back: each file's identity is taken as the
/// copy is made (``snapshot(of:)``), and a file whose identity is the same afterwards was not
/// written by the release, so the source's file stays, even if its author saved a new one
/// meanwhile.
package enum SourceWriteBack {
    /// Which file (device and inode) stands at each path of a working copy.
    package typealias Snapshot = [String: [NSNumber?]]

    /// The identity of every regular file of `working` (a folder, or a package with the
    /// documents beside it), by path relative to it.
    package static func snapshot(of working: URL) throws -> Snapshot {
        var isFolder: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: working.path, isDirectory: &isFolder)
        guard isFolder.boolValue else {
            return packageSuffixes.reduce(into: [:]) { result, suffix in
                result[suffix] = identity(of: URL(fileURLWithPath: working.path + suffix))
            }
        }
        var found: Snapshot = [:]
        let walker = FileManager.default.enumerator(atPath: working.path)
        while let relative = walker?.nextObject() as? String {
            if (walker?.fileAttributes?[.type] as? FileAttributeType) == .typeRegular {
                found[relative] = identity(of: working.appendingPathComponent(relative))
            }
        }
        return found
    }

    /// Makes `source` hold what the release wrote into `working` since `made`, its snapshot
    /// when copied: each file that is not the one it was (a tool renamed a new one over the
    /// link) is linked (or copied) beside its place and renamed over it; a file the working
    /// copy no longer has is removed from the source when the source's is still the one copied.
    package static func apply(from working: URL, to source: URL, made: Snapshot) throws {
        var isFolder: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: working.path, isDirectory: &isFolder)
        let at = { (base: URL, relative: String) in
            isFolder.boolValue ? base.appendingPathComponent(relative) : URL(fileURLWithPath: base.path + relative)
        }
        let now = try snapshot(of: working)
        for (relative, identity) in now where made[relative] != identity {
            try carry(at(working, relative), to: at(source, relative))
        }
        for (relative, identity) in made where now[relative] == nil {
            let there = at(source, relative)
            if Self.identity(of: there) == identity { try FileManager.default.removeItem(at: there) }
        }
    }

    /// A package's own file and the documents beside it, by the suffix added to its path.
    private static let packageSuffixes = ["", PackageSignature.suffix, ChunkIndex.suffix]

    /// A file's device and inode; `nil` when it is not there.
    private static func identity(of url: URL) -> [NSNumber?]? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) else { return nil }
        return [attributes[.systemNumber] as? NSNumber, attributes[.systemFileNumber] as? NSNumber]
    }

    /// Puts `file` at `place`, through a link (or copy) beside it renamed over it.
    private static func carry(_ file: URL, to place: URL) throws {
        let manager = FileManager.default
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
