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

    /// Whether `path` is a link FreshAir made into `store`: a symbolic link whose target,
    /// resolved, lies inside it. Anything else at a live location is the user's, never removed.
    static func leads(_ path: String, into store: String) -> Bool {
        guard Disk.readLink(path) != nil else { return false }
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let inside = URL(fileURLWithPath: store).resolvingSymlinksInPath().path
        return target.hasPrefix(inside + "/") || target == inside
    }

    /// Points the link at `link` to `target` atomically, then flushes the link's folder. The
    /// link is always relative (`../Library/store/versions/7`), so that the two can move
    /// together: an iOS app's container moves to a new path when the app is updated, and an
    /// absolute link would then name nothing.
    static func point(_ link: URL, at target: String) throws {
        let parent = link.deletingLastPathComponent().path
        try Disk.createDirectory(parent)
        // Both resolved, so that `..` in the link means what it means on disk.
        let relative = relativePath(
            from: URL(fileURLWithPath: parent).resolvingSymlinksInPath().path,
            to: URL(fileURLWithPath: target).resolvingSymlinksInPath().path
        )
        try Disk.replaceSymbolicLink(at: link.path, target: relative)
        // The switch has happened. A folder that cannot be flushed only means that a power cut
        // could bring the previous link back, which names a complete version too.
        try? Durability.flush(directory: parent)
    }

    /// The path from folder `from` to `to`, both absolute and resolved: `..` for each of
    /// `from`'s components past what they share, then the rest of `to`.
    static func relativePath(from folder: String, to target: String) -> String {
        let base = folder.split(separator: "/")
        let goal = target.split(separator: "/")
        let shared = zip(base, goal).prefix { $0 == $1 }.count
        let steps = Array(repeating: "..", count: base.count - shared) + goal.dropFirst(shared).map(String.init)
        return steps.isEmpty ? "." : steps.joined(separator: "/")
    }
}
