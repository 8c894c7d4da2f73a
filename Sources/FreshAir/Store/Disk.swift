import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// File-scope names for libc calls that `Disk` shadows with its own methods.
private func posix_rename(_ from: String, _ to: String) -> Int32 { rename(from, to) }
private func posix_link(_ from: String, _ to: String) -> Int32 { link(from, to) }
private func posix_close(_ descriptor: Int32) -> Int32 { close(descriptor) }
private func posix_read(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// The file-system operations the store is built from, as thin POSIX calls that report
/// failures as ``FreshAirError/Code/fileSystem`` errors that keep the system's error.
///
/// POSIX rather than `FileManager` where it matters: `rename(2)` and `symlink(2)` are the
/// atomic steps activation relies on, and hard links let unchanged files carry over to a new
/// version without a copy.
enum Disk {
    static func failure(_ operation: String, _ path: String, _ code: Int32 = errno) -> FreshAirError {
        .fileSystem(
            operation: operation,
            path: path,
            reason: reason(code, dataProtection: DeviceClass.hasDataProtectionHere),
            underlying: POSIXErrorCode(rawValue: code).map { POSIXError($0) }
        )
    }

    /// The system's words for `code`, with what to do where the words alone do not say (too many
    /// open files, an I/O error); where files have a Data Protection class, a refusal also
    /// says what it most likely means there: the device is locked (or not yet unlocked since it
    /// restarted) and the file's class keeps it closed until then.
    static func reason(_ code: Int32, dataProtection: Bool) -> String {
        let words = String(cString: strerror(code))
        if code == EMFILE {
            let limit = openFileLimit.map { " (\($0))" } ?? ""
            return words + ": the process's limit on open files\(limit) is reached; raise it (`ulimit -n`, or"
                + " setrlimit in an app) or sync with lower concurrency"
        }
        if code == EIO {
            return words + ": the storage failed a read or write (a failing disk, or a full volume under a disk"
                + " image); check the storage, then try again"
        }
        guard dataProtection, code == EPERM || code == EACCES else { return words }
        return words
            + " (on a locked device, Data Protection closes the store's files until the first unlock"
            + " after a restart: sync again once the device is unlocked)"
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The process's limit on open descriptors (the soft limit, which is the one enforced);
    /// `nil` when it cannot be read. Unlimited reads as `Int.max`.
    static var openFileLimit: Int? {
        var limit = rlimit()
        #if canImport(Glibc)
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        #else
        guard getrlimit(RLIMIT_NOFILE, &limit) == 0 else { return nil }
        #endif
        return Int(clamping: limit.rlim_cur)  // unlimited (all bits set, or 2^63-1 on Darwin): Int.max
    }

    /// Size and modification time, without following a final link.
    static func status(_ path: String) -> (size: Int64, modified: Double)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return status(info)
    }

    /// ``status(_:)`` of what a `stat` call returned.
    static func status(_ info: stat) -> (size: Int64, modified: Double)? {
        guard (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        #if canImport(Darwin)
        let modified = Double(info.st_mtimespec.tv_sec) + Double(info.st_mtimespec.tv_nsec) / 1e9
        #else
        let modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        #endif
        return (Int64(info.st_size), modified)
    }

    static func createDirectory(_ path: String) throws(FreshAirError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw .fileSystem(
                operation: "create folder",
                path: path,
                reason: error.localizedDescription,
                underlying: error
            )
        }
    }

    /// Removes a file, link or folder tree; absent is fine.
    static func remove(_ path: String) throws(FreshAirError) {
        guard exists(path) else { return }
        do { try FileManager.default.removeItem(atPath: path) } catch {
            throw .fileSystem(operation: "remove", path: path, reason: error.localizedDescription, underlying: error)
        }
    }

    /// Removes everything inside `folder`, which stays.
    static func empty(_ folder: String) throws(FreshAirError) {
        for name in contentsOfDirectory(folder) { try remove(folder + "/" + name) }
    }

    static func rename(_ source: String, to destination: String) throws(FreshAirError) {
        guard posix_rename(source, destination) == 0 else { throw failure("move \(source) to", destination) }
    }

    /// Links `destination` to the same file as `source`, copying when the file system cannot
    /// link (another volume, or no hard links).
    static func link(_ source: String, to destination: String) throws(FreshAirError) {
        if posix_link(source, destination) == 0 { return }
        let code = errno
        guard code == EXDEV || code == EPERM || code == EMLINK || code == ENOTSUP else {
            throw failure("link \(source) to", destination, code)
        }
        do { try FileManager.default.copyItem(atPath: source, toPath: destination) } catch {
            throw .fileSystem(
                operation: "copy \(source) to",
                path: destination,
                reason: error.localizedDescription,
                underlying: error
            )
        }
    }

    static func readLink(_ path: String) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: path)
    }

    /// Points the symbolic link at `path` to `target` in one atomic step: a new link is made
    /// beside it and renamed over the old one, so a reader sees the old or the new target.
    static func replaceSymbolicLink(at path: String, target: String) throws(FreshAirError) {
        let temporary = path + ".freshair-new-\(getpid())"
        try remove(temporary)
        guard symlink(target, temporary) == 0 else { throw failure("create link", temporary) }
        try rename(temporary, to: path)
    }

    /// Writes `data` to a temporary file and renames it into place, so a reader never
    /// sees half of it.
    static func writeAtomically(_ data: Data, to path: String) throws(FreshAirError) {
        do { try data.write(to: URL(fileURLWithPath: path), options: .atomic) } catch {
            throw .fileSystem(operation: "write", path: path, reason: error.localizedDescription, underlying: error)
        }
    }

    /// A file written whole or not at all, its bytes handed over in pieces by `produce`, so
    /// that they need not all be in memory at once: written to a temporary file beside `path`
    /// (its name starts with a dot, which the store's tidying removes after a crash), then
    /// renamed over `path`. Like ``writeAtomically(_:to:)``, it does not flush: the store
    /// makes a version durable as a whole, before it goes live.
    static func writeAtomically(
        to path: String,
        producing produce: (_ write: (UnsafeRawBufferPointer) throws -> Void) throws -> Void
    ) throws {
        let folder = (path as NSString).deletingLastPathComponent
        let temporary = folder + "/." + (path as NSString).lastPathComponent + ".\(getpid()).partial"
        let file = try OutputFile(path: temporary, append: false, startsWriteback: false)
        do {
            try produce { bytes in try file.write(bytes) }
            file.close()
            try rename(temporary, to: path)
        } catch {
            file.close()
            try? remove(temporary)
            throw error
        }
    }

    /// Writes `data` in place, without flushing: for files whose loss in a crash costs nothing
    /// (a lease's owner, which names a process a crash ends anyway), written at every check.
    ///
    /// Not `Data.write(to:)`: swift-foundation follows even a write without `.atomic` with an
    /// `fsync` (`strace`: 0.46 ms of a 2 ms check).
    static func writeInPlace(_ data: Data, to path: String) throws(FreshAirError) {
        let file = try OutputFile(path: path, append: false, startsWriteback: false)
        defer { file.close() }
        let failure = data.withUnsafeBytes { bytes -> FreshAirError? in
            do throws(FreshAirError) { try file.write(bytes) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    static func read(_ path: String) throws(FreshAirError) -> Data {
        guard let data = FileManager.default.contents(atPath: path) else { throw failure("read", path) }
        return data
    }

    /// A whole file as bytes, read straight into the array: a record of 100,000 files is 11 MB,
    /// which `Data` and then an array would hold twice.
    static func readBytes(_ path: String) throws(FreshAirError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("read", path) }
        defer { _ = posix_close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw failure("read", path) }
        // Read into uninitialized memory (zeroing 1 MB first was 4% of a no-change check), one
        // byte past the size: a read that fills it shows the file grew since `fstat`, and only
        // then is the array copied into a larger one.
        var bytes: [UInt8] = []
        var room = Int(info.st_size) + 1
        while true {
            let (kept, wanted) = (bytes, bytes.count + room)
            var failed = false
            bytes = [UInt8](unsafeUninitializedCapacity: wanted) { buffer, filled in
                filled = kept.withUnsafeBufferPointer { buffer.initialize(fromContentsOf: $0) }
                while filled < buffer.count {
                    let count = posix_read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
                    if count < 0, errno == EINTR { continue }
                    guard count > 0 else {
                        failed = count < 0
                        return
                    }
                    filled += count
                }
            }
            guard !failed else { throw failure("read", path) }
            if bytes.count < wanted { return bytes }  // the end
            room = 64 << 10
        }
    }

    static func contentsOfDirectory(_ path: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    }

    /// Hashes a file on disk in 1 MiB reads.
    static func hash(_ path: String, algorithm: ContentHash.Algorithm) throws(FreshAirError) -> (ContentHash, Int64) {
        var hasher = ContentHasher(algorithm)
        let size = try hash(path, into: &hasher)
        return (hasher.finalize(), size)
    }

    /// Like ``hash(_:algorithm:)``, but `nil` when nothing is at `path`; reads through `buffer`.
    static func hashIfPresent(
        _ path: String,
        algorithm: ContentHash.Algorithm,
        buffer: UnsafeMutableRawBufferPointer
    ) throws(FreshAirError) -> (ContentHash, Int64)? {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw failure("open", path)
        }
        defer { _ = posix_close(descriptor) }
        var hasher = ContentHasher(algorithm)
        let size = try hash(descriptor: descriptor, path: path, into: &hasher, buffer: buffer)
        return (hasher.finalize(), size)
    }

    /// Feeds a file's bytes into `hasher` (which may already hold a prefix); returns the
    /// number of bytes read.
    static func hash(_ path: String, into hasher: inout ContentHasher) throws(FreshAirError) -> Int64 {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw failure("open", path) }
        defer { _ = posix_close(descriptor) }
        // A buffer the file's size (up to 1 MiB), not a 1 MiB allocation for every small file.
        var info = stat()
        let size = fstat(descriptor, &info) == 0 ? Int(info.st_size) : 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(4096, min(size + 1, 1 << 20)), alignment: 16)
        defer { buffer.deallocate() }
        return try hash(descriptor: descriptor, path: path, into: &hasher, buffer: buffer)
    }

    private static func hash(
        descriptor: Int32,
        path: String,
        into hasher: inout ContentHasher,
        buffer: UnsafeMutableRawBufferPointer
    ) throws(FreshAirError) -> Int64 {
        var total: Int64 = 0
        while true {
            let count = posix_read(descriptor, buffer.baseAddress, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("read", path)
            }
            if count == 0 { return total }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            total += Int64(count)
        }
    }
}
