import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// File-scope names for the libc calls `InputFile` shadows with its own methods.
private func systemClose(_ descriptor: Int32) -> Int32 { close(descriptor) }

/// A file opened for reading with `pread(2)`: reads at an offset, for indexing a file and
/// copying its kept chunks into a new version, and for reading a large version record in pieces.
/// `pread` keeps no offset of its own: any thread may read.
final class InputFile: ChunkSource, Sendable {
    let descriptor: Int32
    let path: String

    init(path: String) throws(FreshAirError) {
        self.path = path
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Disk.failure("open", path) }
    }

    deinit { _ = systemClose(descriptor) }

    /// The file's size now.
    var size: Int64 {
        get throws(FreshAirError) {
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { throw Disk.failure("stat", path) }
            return Int64(info.st_size)
        }
    }

    /// Fills `buffer` from `offset`; throws if the file ends first.
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(FreshAirError) {
        do {
            try PositionalIO.read(descriptor, at: offset, into: buffer)
        } catch .short {
            throw .fileSystem(
                operation: "read",
                path: path,
                reason: "the file is shorter than expected: it changed while it was read",
                underlying: POSIXError(.EIO)
            )
        } catch {
            throw Disk.failure("read", path, error.code)
        }
    }
}
