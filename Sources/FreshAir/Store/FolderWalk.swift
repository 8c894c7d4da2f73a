import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One task's walk through the files of a folder tree in path order (a version's kept files):
/// the folder of the last path stays open, so each file is named to the kernel by its last
/// component instead of a path resolved from `/` again, and each folder is opened once.
///
/// An update that keeps 99,990 of 100,000 files stats each while planning and links each while
/// carrying it over; with whole paths, 55% of the update was in those two calls. Paths in any
/// other order still work: the walk reopens the folder whenever it changes.
///
/// Not `Sendable`: one walk belongs to the one loop that makes it.
final class FolderWalk {
    /// The tree's path, for messages and for a copy where a link cannot be made.
    let path: String
    private let root: Int32
    /// The folder (relative to the root) of the last path, and its descriptor; `-1` when it is
    /// missing.
    private var current: (folder: String, descriptor: Int32)?

    /// Opens the tree at `path`; `nil` when it cannot be opened.
    init?(path: String) {
        root = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else { return nil }
        self.path = path
    }

    deinit {
        if let current, current.descriptor >= 0, current.descriptor != root { close(current.descriptor) }
        close(root)
    }

    /// A descriptor of the folder holding `relative` (a path below the tree) and the path's last
    /// name; `nil` when that folder is missing. The descriptor is the walk's: not closed by the caller.
    func parent(of relative: String) -> (descriptor: Int32, name: String)? {
        guard let slash = relative.utf8.lastIndex(of: UInt8(ascii: "/")) else { return (root, relative) }
        let folder = relative[..<slash]
        let name = String(relative[relative.utf8.index(after: slash)...])
        // Bytes, not `String`'s ==, which takes two spellings of one name as the same folder.
        if let current, current.folder.utf8.elementsEqual(folder.utf8) {
            return current.descriptor >= 0 ? (current.descriptor, name) : nil
        }
        if let current, current.descriptor >= 0 { close(current.descriptor) }
        // Never through a link: the tree is the store's own, and a link in it is damage.
        let opened = ConfinedFolder.openBeneath(
            root,
            String(folder),
            O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW,
            0
        )
        current = (String(folder), opened)
        return opened >= 0 ? (opened, name) : nil
    }

    /// The size and modification time of the regular file at `relative`; `nil` when it is
    /// missing or not a regular file (a link in its place is not followed).
    func status(of relative: String) -> (size: Int64, modified: Double)? {
        guard let (folder, name) = parent(of: relative) else { return nil }
        var info = stat()
        guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return Disk.status(info)
    }
}
