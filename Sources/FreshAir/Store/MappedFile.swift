import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file mapped read-only, for a large document read once, front to back: a root manifest of
/// 100,000 entries is 14 MB. The reader hands back the pages behind it as it goes
/// (``letGo(before:)``), so what the process holds of the file is a window, not the whole.
///
/// The mapping is private and read-only: a page handed back is read again from the file if it
/// is touched again (an error's line and column, a second pass), so letting go never changes
/// what the bytes say. A file changed under the mapping is the update's own partial, which
/// nothing else writes.
final class MappedFile: @unchecked Sendable {
    // Immutable after `init`; the pages themselves are never written.
    private let base: UnsafeMutableRawPointer
    let count: Int

    /// Maps the file at `path`; `nil` when it is empty or cannot be mapped (the caller then
    /// keeps the bytes it has).
    init?(path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_size > 0,
            let mapped = mmap(nil, Int(info.st_size), PROT_READ, MAP_PRIVATE, descriptor, 0),
            mapped != UnsafeMutableRawPointer(bitPattern: -1)
        else { return nil }
        base = mapped
        count = Int(info.st_size)
    }

    deinit { munmap(base, count) }

    /// The bytes, not copied. The value keeps the mapping alive for as long as it is held.
    var data: Data {
        Data(bytesNoCopy: base, count: count, deallocator: .custom { _, _ in withExtendedLifetime(self) {} })
    }

    /// Hands back the whole pages before `offset`: the reader is done with them for now.
    func letGo(before offset: Int) {
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let end = min(offset, count) / pageSize * pageSize
        if end > 0 { _ = madvise(base, end, MADV_DONTNEED) }
    }
}
