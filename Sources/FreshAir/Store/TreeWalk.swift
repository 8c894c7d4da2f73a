import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The regular files below a folder, found one folder at a time and handed to a visitor as
/// they are found: a version of 200,000 files is never a list of 200,000 paths, which at
/// about 64 bytes a path would be 12.8 MB on the device that flushes file by file.
enum TreeWalk {
    /// Calls `file` with the path, relative to `root`, of each regular file below it, and
    /// returns the folders, relative to `root` (`""` is `root` itself), parents before their
    /// children. Links are not followed; an entry that vanishes during the walk is skipped.
    static func files(
        under root: String,
        _ file: (String) throws(FreshAirError) -> Void
    ) throws(FreshAirError) -> [String] {
        var folders: [String] = []
        var pending = [""]
        while let relative = pending.popLast() {
            folders.append(relative)
            let folder = relative.isEmpty ? root : root + "/" + relative
            for name in Disk.contentsOfDirectory(folder) {
                let child = relative.isEmpty ? name : relative + "/" + name
                var info = stat()
                guard lstat(root + "/" + child, &info) == 0 else { continue }
                switch info.st_mode & S_IFMT {
                case S_IFDIR: pending.append(child)
                case S_IFREG: try file(child)
                default: continue
                }
            }
        }
        return folders
    }
}
