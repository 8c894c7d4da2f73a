import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// File-scope names for the libc calls `OutputFile` shadows with its own methods.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
private func systemClose(_ descriptor: Int32) -> Int32 { close(descriptor) }

/// A file opened for writing with plain `write(2)` calls: no buffering to hold memory, no
/// copies.
final class OutputFile {
    private var descriptor: Int32
    let path: String
    /// End of what was appended.
    private var end: Int64 = 0
    /// What was written (appended, at offsets, or copied) since write-back was last started:
    /// the span it lies in, and how many bytes.
    private var unflushed: Range<Int64>?
    private var unflushedBytes: Int64 = 0
    /// Dirty bytes after which write-back starts (Linux): the disk works while the network
    /// (or the copy of a large file's kept blocks) does, so the flush before activation finds
    /// little left to do.
    private static let writebackStep: Int64 = 8 << 20

    private let startsWriteback: Bool

    /// - Parameter startsWriteback: push written bytes to disk as they accumulate (Linux);
    ///   `false` for a file that will be deleted soon, which then may never reach the disk.
    init(path: String, append: Bool, startsWriteback: Bool = true) throws(FreshAirError) {
        self.path = path
        self.startsWriteback = startsWriteback
        let flags = O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC)
        descriptor = open(path, flags, 0o644)
        guard descriptor >= 0 else { throw Disk.failure("open for writing", path) }
        if append { end = Int64(lseek(descriptor, 0, SEEK_END)) }
    }

    /// An existing file opened to write at offsets (``write(_:at:)``), neither truncated nor appended to.
    init(updating path: String) throws(FreshAirError) {
        self.path = path
        startsWriteback = true
        descriptor = open(path, O_WRONLY)
        guard descriptor >= 0 else { throw Disk.failure("open for writing", path) }
    }

    /// A file opened elsewhere (by ``ConfinedFolder``), written from its start.
    init(descriptor: Int32, path: String, startsWriteback: Bool) {
        self.descriptor = descriptor
        self.path = path
        self.startsWriteback = startsWriteback
        // Where writes begin: 0 for a new file, its size for one opened to append to.
        end = max(0, Int64(lseek(descriptor, 0, SEEK_END)))
    }

    /// Sets the permission bits on the open file (never through a path, which could be a link).
    func setMode(_ mode: mode_t) {
        _ = fchmod(descriptor, mode)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(FreshAirError) {
        var offset = 0
        while offset < bytes.count {
            let written = systemWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw Disk.failure("write", path)
            }
            offset += written
        }
        wrote(end..<end + Int64(bytes.count))
        end += Int64(bytes.count)
    }

    /// Counts `range` as written; past ``writebackStep`` dirty bytes, asks the kernel to start
    /// writing them to disk without waiting for it.
    private func wrote(_ range: Range<Int64>) {
        guard startsWriteback, !range.isEmpty else { return }
        let span =
            unflushed.map { min($0.lowerBound, range.lowerBound)..<max($0.upperBound, range.upperBound) } ?? range
        unflushedBytes += Int64(range.count)
        guard unflushedBytes >= Self.writebackStep else {
            unflushed = span
            return
        }
        #if os(Linux)
        _ = LinuxCalls.syncFileRange?(descriptor, span.lowerBound, Int64(span.count), LinuxCalls.syncFileRangeWrite)
        #endif
        unflushed = nil
        unflushedBytes = 0
    }

    /// Writes `bytes` at `offset`, leaving the file's other bytes and the sequential position
    /// alone: a file assembled from pieces that arrive in any order.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(FreshAirError) {
        var done = 0
        while done < bytes.count {
            let written = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if written < 0 {
                if errno == EINTR { continue }
                throw Disk.failure("write", path)
            }
            done += written
        }
        wrote(offset..<offset + Int64(bytes.count))
    }

    /// Copies `length` bytes of `input` from `offset` to `target` here without passing them
    /// through memory: a kernel copy, or blocks shared with `input` where the file system can
    /// (copy_file_range(2) on Linux). Answers `false`, having copied nothing, where the
    /// platform, the kernel or the file system pair cannot; the caller then writes the bytes.
    func copy(from input: InputFile, at offset: Int64, length: Int, to target: Int64) throws(FreshAirError) -> Bool {
        #if os(Linux)
        guard let copyFileRange = LinuxCalls.copyFileRange else { return false }
        var (from, to, left) = (offset, target, length)
        while left > 0 {
            let copied = copyFileRange(input.descriptor, &from, descriptor, &to, left, 0)
            if copied > 0 {
                left -= copied
                continue
            }
            if copied < 0, errno == EINTR { continue }
            if left == length, copied < 0, [ENOSYS, EXDEV, EOPNOTSUPP, EINVAL, EBADF].contains(errno) { return false }
            if copied == 0 { throw Disk.failure("copy from \(input.path), which ended first, to", path, EIO) }
            throw Disk.failure("copy to", path)
        }
        wrote(target..<target + Int64(length))
        return true
        #else
        return false
        #endif
    }

    /// Sets the file's length: zeros up to it, or cut there.
    func setLength(_ length: Int64) throws(FreshAirError) {
        guard ftruncate(descriptor, off_t(length)) == 0 else { throw Disk.failure("truncate", path) }
    }

    func truncate() throws(FreshAirError) {
        guard ftruncate(descriptor, 0) == 0 else { throw Disk.failure("truncate", path) }
    }

    func close() {
        if descriptor >= 0 { _ = systemClose(descriptor) }
        descriptor = -1
    }

    deinit { close() }
}
