import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What makes a version durable before it goes live, so that after a power cut the live link
/// never names files whose data never reached the disk.
///
/// Activation calls ``flush(tree:)`` on the new version (files, folders and its record) before
/// the live link moves, then ``flush(directory:)`` on the link's folder so the switch itself
/// survives. Every call's result is checked: a flush that fails (a disk reporting a write
/// error) stops the activation, and the live version stays.
enum Durability {
    /// Flushes everything written under `path`.
    ///
    /// Linux: one `syncfs(2)` for the file system holding it (cheaper than an `fsync` per file,
    /// and since Linux 5.8 it reports write-back errors). Apple platforms: `fsync(2)` on every
    /// file and folder, then one `F_FULLFSYNC`, which also empties the drive's own cache
    /// (plain `fsync` there does not).
    static func flush(tree path: String) throws(FreshAirError) {
        #if os(Linux)
        let descriptor = try open(path)
        defer { _ = close(descriptor) }
        if let syncfs = LinuxCalls.syncfs {
            guard syncfs(descriptor) == 0 else { throw Disk.failure("flush (syncfs) the file system holding", path) }
        } else {
            sync()
        }
        #else
        var pending = [path]
        while let folder = pending.popLast() {
            for name in Disk.contentsOfDirectory(folder) {
                let child = folder + "/" + name
                var info = stat()
                guard lstat(child, &info) == 0 else { throw Disk.failure("inspect", child) }
                switch info.st_mode & S_IFMT {
                case S_IFDIR: pending.append(child)
                case S_IFREG: try flush(file: child)
                default: continue
                }
            }
            try flush(file: folder)
        }
        let descriptor = try open(path)
        defer { _ = close(descriptor) }
        guard fcntl(descriptor, F_FULLFSYNC) == 0 || fsync(descriptor) == 0 else {
            throw Disk.failure("flush (F_FULLFSYNC)", path)
        }
        #endif
    }

    /// Flushes a folder's entries: a rename or link made in it survives a power cut.
    static func flush(directory path: String) throws(FreshAirError) {
        try flush(file: path)
    }

    private static func flush(file path: String) throws(FreshAirError) {
        let descriptor = try open(path)
        defer { _ = close(descriptor) }
        guard fsync(descriptor) == 0 else { throw Disk.failure("flush (fsync)", path) }
    }

    private static func open(_ path: String) throws(FreshAirError) -> Int32 {
        let descriptor = Foundation.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Disk.failure("open for flushing", path) }
        return descriptor
    }
}
