import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file in an update's folder that has no name once open: where a long plan keeps what it
/// need not hold in memory (``DigestsAndSizes``' records, a ``PathList``'s full pages). A
/// process that is killed leaves nothing behind; the file is gone when the last list that
/// shares it is.
///
/// A read that fails (an I/O error on the device) stops the process, as a fault of its own
/// memory would: the last good version is untouched, and no file is ever checked against
/// bytes that were not read.
final class UnnamedFile: PageFile {
    let descriptor: Int32

    /// A new file in `folder`, unlinked as soon as it is open; `nil` when it cannot be made.
    init?(in folder: String) {
        let path = folder + "/.selection-" + UUID().uuidString
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        unlink(path)
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Writes `bytes` at `offset`; `false` when the file could not take them (a full disk).
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Bool {
        do {
            try PositionalIO.write(descriptor, bytes, at: offset)
            return true
        } catch {
            return false
        }
    }

    /// The `count` bytes at `offset`, written before.
    func read(at offset: Int64, count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { buffer in
            do throws(PositionalIO.Failure) {
                try PositionalIO.read(descriptor, at: offset, into: buffer)
            } catch {
                fatalError(
                    "FreshAir could not read back a plan it wrote (errno \(error.code)): the device failed a read"
                )
            }
        }
        return bytes
    }
}

extension UnnamedFile {
    /// Makes the files a ``PathList`` keeps its full pages in, in `folder`.
    static func maker(in folder: String?) -> PageFileMaker? {
        guard let folder else { return nil }
        return { @Sendable () -> (any PageFile)? in UnnamedFile(in: folder) }
    }
}

extension PathList {
    /// An empty list of a plan's or a table's paths whose full pages go to an unnamed file in
    /// `folder`. A page is as many bytes as the digests' buffer of `bufferFiles` files beside
    /// it (64 KB), and never less than the longest path; tests that know their paths' lengths
    /// set `pageSize`.
    init(spillingTo folder: String?, bufferFiles: Int, pageSize: Int? = nil) {
        let pageSize =
            pageSize ?? Swift.min(1 << 16, Swift.max(BundlePath.maxLength, bufferFiles * DigestsAndSizes.recordSize))
        self.init(pageSize: pageSize, spillingWith: UnnamedFile.maker(in: folder))
    }
}
