import CSystemCalls
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

    /// A file opened elsewhere (by `ConfinedFolder`): `empty` when it was just created or
    /// truncated, else opened to append to, from its end.
    init(descriptor: Int32, path: String, empty: Bool, startsWriteback: Bool) {
        self.descriptor = descriptor
        self.path = path
        self.startsWriteback = startsWriteback
        // Where writes begin. A file just created starts at 0: no `lseek` for each of 10,000.
        end = empty ? 0 : max(0, Int64(lseek(descriptor, 0, SEEK_END)))
    }

    /// Sets aside the disk blocks for the next `length` bytes (Linux): the file system then
    /// maps each page written to a block already chosen, where it otherwise reserves and
    /// places them page by page. Best effort: where it cannot, writes do it as before.
    func reserve(_ length: Int64) {
        guard length > 0 else { return }
        _ = freshair_reserve(descriptor, end, length)
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

    /// Counts `range` as written to this file through another descriptor, for write-back.
    func countWritten(_ range: Range<Int64>) {
        wrote(range)
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
        do {
            try PositionalIO.write(descriptor, bytes, at: offset)
        } catch {
            throw Disk.failure("write", path, error.code)
        }
        wrote(offset..<offset + Int64(bytes.count))
    }

    /// Makes the `length` bytes here at `target` share the blocks `input` holds at `offset`
    /// (a reflink: Btrfs, XFS, bcachefs), so that they take neither a copy nor more space.
    ///
    /// - Returns: `.shared`; `.notHere` where the blocks cannot be shared there (offsets or a
    ///   length off the file system's block boundaries); `.never` where they never can be (a
    ///   file system without shared blocks, such as ext4, or another platform). Either way the
    ///   caller writes the bytes itself.
    func share(
        from input: InputFile,
        at offset: Int64,
        length: Int64,
        to target: Int64
    ) throws(FreshAirError) -> Sharing {
        guard length > 0 else { return .shared }
        // Shared blocks are not dirty: nothing to hand to the disk (`wrote`) but the metadata,
        // which the flush before activation writes.
        if freshair_share_range(input.descriptor, offset, length, descriptor, target) == 0 { return .shared }
        switch errno {
        case EINVAL: return .notHere
        case EOPNOTSUPP, EXDEV, ENOSYS, ENOTTY, EBADF, EPERM, ETXTBSY: return .never
        default: throw Disk.failure("share blocks of \(input.path) with", path)
        }
    }

    /// What ``share(from:at:length:to:)`` did.
    enum Sharing {
        case shared
        case notHere
        case never
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
