#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole reads and writes at an offset (`pread(2)`, `pwrite(2)`): the one loop that retries
/// interrupted calls and partial transfers, for every caller that reads or writes a file by
/// position. Each caller decides what a failure means for it (a thrown ``FreshAirError``, a
/// plan kept in memory, a stop).
enum PositionalIO {
    /// Why a whole transfer did not happen.
    enum Failure: Error, Equatable {
        /// The call failed with this `errno`.
        case system(Int32)
        /// The file ended before the buffer was full (a read), or the device took no more
        /// bytes without an error (a write).
        case short

        /// The `errno` to report: `EIO` for a short transfer, which has none of its own.
        var code: Int32 {
            switch self {
            case .system(let code): code
            case .short: EIO
            }
        }
    }

    /// Fills `buffer` with the bytes at `offset` of `descriptor`.
    static func read(
        _ descriptor: Int32,
        at offset: Int64,
        into buffer: UnsafeMutableRawBufferPointer
    ) throws(Failure) {
        try whole(buffer.count) { done in
            pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
        }
    }

    /// Writes all of `bytes` at `offset` of `descriptor`.
    static func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(Failure) {
        try whole(bytes.count) { done in
            pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
        }
    }

    /// Calls `transfer` with the bytes moved so far until `count` have moved: again after an
    /// interrupted call, and after a partial one for the rest.
    private static func whole(_ count: Int, _ transfer: (_ done: Int) -> Int) throws(Failure) {
        var done = 0
        while done < count {
            let moved = transfer(done)
            if moved < 0 {
                if errno == EINTR { continue }
                throw .system(errno)
            }
            guard moved > 0 else { throw .short }
            done += moved
        }
    }
}
