import Foundation

/// The symbolic link readers go through (a store's live version, a repository's snapshot),
/// switched in one `rename(2)`.
enum LiveLink {
    /// Refuses to take over `path` unless it is a link, nothing, or an empty folder (a freshly
    /// made destination, which is removed); anything else is the user's.
    static func claim(_ path: String) throws {
        guard Disk.exists(path), Disk.readLink(path) == nil else { return }
        guard Disk.isDirectory(path), Disk.contentsOfDirectory(path).isEmpty else {
            throw FreshAirError.liveLocationOccupied(path: path)
        }
        try Disk.remove(path)
    }

    /// Points the link at `link` to `target` atomically, relative when the target sits beside
    /// or below the link so that both can move together, then flushes the link's folder.
    static func point(_ link: URL, at target: String) throws {
        let parent = link.deletingLastPathComponent().path
        let relative = target.hasPrefix(parent + "/") ? String(target.dropFirst(parent.count + 1)) : target
        try Disk.createDirectory(parent)
        try Disk.replaceSymbolicLink(at: link.path, target: relative)
        // The switch has happened. A folder that cannot be flushed only means that a power cut
        // could bring the previous link back, which names a complete version too.
        try? Durability.flush(directory: parent)
    }
}
