import Crypto
package import Foundation
import FreshAir

/// The copy of a source a release works on: its files hard links to the source's, in a
/// folder of its own under the temporary folder (or `.breeze-scratch` beside the source, when
/// that is another file system). Every tool replaces a file by renaming a new one over it, so
/// the source is written only when the release succeeded.
///
/// A release killed with SIGKILL cannot remove its copy. Each copy's name carries the process
/// id and a digest of the host name (`breeze-release-PID-HOST-UUID`), so the next release
/// removes copies whose process, on this host, is gone; a live release's, or another host's
/// on a shared volume, stay.
package enum ScratchCopy {
    package static let prefix = "breeze-release-"

    /// The folder beside a source for its scratch copies, when the temporary folder is on
    /// another file system (no hard links across).
    static let folderName = ".breeze-scratch"

    static func parent(for source: URL) -> URL {
        let temporary = FileManager.default.temporaryDirectory
        let parent = source.deletingLastPathComponent()
        let device = { (url: URL) in
            (try? FileManager.default.attributesOfItem(atPath: url.path))?[.systemNumber] as? NSNumber
        }
        guard let here = device(parent), here != device(temporary) else { return temporary }
        return parent.appendingPathComponent(folderName, isDirectory: true)
    }

    /// This host's name as a copy's name carries it: 8 hex digits of its SHA-256.
    package static let host: String = {
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count - 1)
        let digest = SHA256.hash(data: Data(String(cString: name).utf8))
        return digest.map { String(format: "%02x", $0) }.joined().prefix(8).description
    }()

    /// Removes the copies in `parent` left by releases on this host whose process is gone.
    package static func reapAbandoned(in parent: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: parent.path) else { return }
        for name in names where name.hasPrefix(prefix) {
            let words = name.dropFirst(prefix.count).split(separator: "-", maxSplits: 2)
            guard words.count == 3, words[1] == host, let pid = pid_t(words[0]), pid > 0, pid != getpid(),
                kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            try? FileManager.default.removeItem(at: parent.appendingPathComponent(name))
        }
    }

    /// `text` with every path into a scratch copy shortened to the part a user knows: the source
    /// folder's own name and what follows (`Content.freshair/release_notes.json`), not
    /// `/tmp/breeze-release-4816-5bce98f7-…/Content.freshair/release_notes.json`.
    package static func withSourcePaths(_ text: String) -> String {
        guard text.contains(prefix) else { return text }
        let pattern =
            #"[^\s"'(]*/"# + NSRegularExpression.escapedPattern(for: prefix) + #"[0-9]+-[0-9a-f]+-[0-9A-F-]{36}/"#
        return text.replacingOccurrences(of: pattern, with: "", options: .regularExpression)
    }

    /// A copy of `source` in a new temporary folder, its files hard links to the source's
    /// (copies where the file system cannot link), under the same name.
    static func linkedCopy(of source: URL) throws -> URL {
        let parent = parent(for: source)
        reapAbandoned(in: parent)
        let folder = parent.appendingPathComponent("\(prefix)\(getpid())-\(host)-\(UUID().uuidString)")
        let copy = folder.appendingPathComponent(source.lastPathComponent)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        func link(_ from: URL, _ to: URL) throws {
            do { try FileManager.default.linkItem(at: from, to: to) } catch {
                try FileManager.default.copyItem(at: from, to: to)
            }
        }
        var isFolder: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: source.path, isDirectory: &isFolder)
        guard isFolder.boolValue else {
            try link(source, copy)
            // A package's signature document and chunk index live beside it.
            for suffix in [PackageSignature.suffix, ".freshair-chunks"] {
                let beside = URL(fileURLWithPath: source.path + suffix)
                if FileManager.default.fileExists(atPath: beside.path) {
                    try link(beside, URL(fileURLWithPath: copy.path + suffix))
                }
            }
            return copy
        }
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        let walker = FileManager.default.enumerator(atPath: source.path)
        while let relative = walker?.nextObject() as? String {
            let from = source.appendingPathComponent(relative)
            let to = copy.appendingPathComponent(relative)
            let type = (walker?.fileAttributes?[.type] as? FileAttributeType)
            if type == .typeDirectory {
                try FileManager.default.createDirectory(at: to, withIntermediateDirectories: true)
            } else if type == .typeSymbolicLink {
                try FileManager.default.createSymbolicLink(
                    atPath: to.path,
                    withDestinationPath: try FileManager.default.destinationOfSymbolicLink(atPath: from.path)
                )
            } else {
                try link(from, to)
            }
        }
        return copy
    }
}
