import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What makes a version durable before it goes live, so that after a power cut the live link
/// never names files whose data never reached the disk.
///
/// Activation calls ``flush(version:record:linked:folder:)`` on the new version (files, folders
/// and its record) before the live link moves, then ``flush(directory:)`` on the link's folder so
/// the switch itself survives. While the version is assembled, ``FlushAhead`` has the disk start
/// on its files early (Linux), so that the flush before the switch waits for the tail only.
/// Every call's result is checked: a flush that fails (a disk reporting a write error) stops
/// the activation, and the live version stays.
enum Durability {
    /// Whether a new version is flushed file by file, skipping the files hard-linked from the
    /// version before, whose paths must then be kept (Apple platforms, ``FlushPlan``); on Linux
    /// one `syncfs(2)` flushes it whole and needs no list.
    #if os(Linux)
    static let flushesFileByFile = false
    #else
    static let flushesFileByFile = true
    #endif

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
        try flushFileSystem(holding: descriptor, path: path)
        #else
        try fullSync(
            FlushPlan.run(version: path, record: nil, linked: []) { file throws(FreshAirError) in
                try flush(file: file)
            }
        )
        #endif
    }

    /// Flushes a new version before the live link names it: on Linux, one `syncfs(2)`, as
    /// ``flush(tree:)``; on Apple platforms, only what this update wrote (``FlushPlan``): the
    /// files it downloaded or wrote (not those hard-linked from the previous version, whose
    /// data is on disk already), the record, every folder of the version and `versions/`
    /// itself, then one `F_FULLFSYNC`.
    ///
    /// `linked: nil` says every file is a link (a repository's snapshot): see
    /// ``flush(linkedTree:record:)``. `folder`, the version's folder as it was staged, is what
    /// Linux flushes through when given (``ConfinedFolder/flushFileSystem()``): it then hears
    /// of every write-back error since the version was staged, also those a flush ahead saw.
    static func flush(
        version path: String,
        record: String,
        linked: PathSet?,
        folder: ConfinedFolder? = nil
    ) throws(FreshAirError) {
        #if os(Linux)
        if let folder { try folder.flushFileSystem() } else { try flush(tree: path) }
        #else
        try fullSync(
            FlushPlan.run(version: path, record: record, linked: linked) { file throws(FreshAirError) in
                try flush(file: file)
            }
        )
        #endif
    }

    /// Flushes a tree made only of hard links to files already flushed (a repository's
    /// snapshot) and the record written for it, before a link names the tree: as a version
    /// whose every file is linked, so no file's data is flushed again.
    static func flush(linkedTree path: String, record: String) throws(FreshAirError) {
        try flush(version: path, record: record, linked: nil)
    }

    #if os(Linux)
    /// One `syncfs(2)` through `descriptor` (`path` names it in an error); `sync()` where the C
    /// library lacks it. The kernel reports the write-back errors since `descriptor` was opened.
    static func flushFileSystem(holding descriptor: Int32, path: String) throws(FreshAirError) {
        guard let syncfs = LinuxCalls.syncfs else { return sync() }
        guard syncfs(descriptor) == 0 else { throw Disk.failure("flush (syncfs) the file system holding", path) }
    }
    #endif

    /// Flushes a folder's entries: a rename or link made in it survives a power cut.
    static func flush(directory path: String) throws(FreshAirError) {
        try flush(file: path)
    }

    private static func flush(file path: String) throws(FreshAirError) {
        let descriptor = try open(path)
        defer { _ = close(descriptor) }
        guard fsync(descriptor) == 0 else { throw Disk.failure("flush (fsync)", path) }
    }

    /// `F_FULLFSYNC` on `path`, which also empties the drive's own cache; `fsync` where the
    /// file system refuses it.
    private static func fullSync(_ path: String) throws(FreshAirError) {
        let descriptor = try open(path)
        defer { _ = close(descriptor) }
        #if canImport(Darwin)
        guard fcntl(descriptor, F_FULLFSYNC) == 0 || fsync(descriptor) == 0 else {
            throw Disk.failure("flush (F_FULLFSYNC)", path)
        }
        #else
        guard fsync(descriptor) == 0 else { throw Disk.failure("flush (fsync)", path) }
        #endif
    }

    private static func open(_ path: String) throws(FreshAirError) -> Int32 {
        let descriptor = Foundation.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Disk.failure("open for flushing", path) }
        return descriptor
    }
}

/// What an Apple device flushes to make a new version durable, decided apart from the flushing
/// so that it is tested on Linux (where one `syncfs` does it all).
///
/// A hard-linked unchanged file shares its data with the version before, flushed when that
/// version went live: flushing it again would cost an `fsync` per file (10,000 for a
/// 10,000-file bundle) for nothing. Every folder of the new version is new, so its entries
/// are flushed; `versions/` holds the renamed folder and the record. `F_FULLFSYNC` comes last,
/// once: it empties the drive's cache, which plain `fsync` on Apple platforms does not.
enum FlushPlan {
    /// Calls `flush` with each path to flush, in order: the files below `version` that this
    /// update wrote (those not in `linked`; none when `linked` is `nil`, a tree of links only)
    /// as the walk finds them, then `record`; then every folder of the version, deepest first,
    /// the record's folder when it is not `versions/`, and `versions/` last. Returns where the
    /// one `F_FULLFSYNC` goes: `versions/`, or `version` itself when there is no record (a
    /// tree flushed whole).
    static func run(
        version: String,
        record: String?,
        linked: PathSet?,
        flush: (String) throws(FreshAirError) -> Void
    ) throws(FreshAirError) -> String {
        let folders = try TreeWalk.files(under: version) { file throws(FreshAirError) in
            guard let linked, !linked.contains(file) else { return }
            try flush(version + "/" + file)
        }
        if let record { try flush(record) }
        let depth = { (path: String) in path.isEmpty ? 0 : path.utf8.count { $0 == UInt8(ascii: "/") } + 1 }
        for folder in folders.sorted(by: { (depth($0), $0) > (depth($1), $1) }) {
            try flush(folder.isEmpty ? version : version + "/" + folder)
        }
        guard let record else { return version }
        let versions = (version as NSString).deletingLastPathComponent
        let recordFolder = (record as NSString).deletingLastPathComponent
        if recordFolder != versions { try flush(recordFolder) }
        try flush(versions)
        return versions
    }
}
