import Synchronization

/// A file a long list writes what it need not hold in memory to, and reads it back from: bytes
/// written at an offset. The store makes them (``UnnamedFile``, in an update's folder).
protocol PageFile: AnyObject, Sendable {
    /// Writes `bytes` at `offset`; `false` when the file could not take them (a full disk).
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Bool
    /// The `count` bytes at `offset`, written before.
    func read(at offset: Int64, count: Int) -> [UInt8]
}

/// Makes a new ``PageFile``; `nil` when none can be made.
typealias PageFileMaker = @Sendable () -> (any PageFile)?

/// A ``PathList``'s full pages, each `pageSize` bytes at its number's place in a file, read back
/// through a cache of a few (``PageCache``).
///
/// Four pages: every reader of a plan's paths reads them in order or near it (downloads, a
/// pack's files, the set of names reading a folder's first spelling), and a few at once
/// (concurrent downloads, the pack beside them). A reader that jumps about costs a read of
/// 64 KB each time, never a wrong answer.
final class SpilledPages: Sendable {
    static let cachedPages = 4

    let file: any PageFile
    let pageSize: Int
    private let cache = Mutex(PageCache(slots: SpilledPages.cachedPages))

    init(file: any PageFile, pageSize: Int) {
        self.file = file
        self.pageSize = pageSize
    }

    /// Writes page `number`, `page`'s bytes (at most a page); `false` when the file could not
    /// take them. A page written again is read again.
    func write(_ page: [UInt8], number: Int) -> Bool {
        precondition(page.count <= pageSize)
        cache.withLock { $0.forget(number) }
        return page.withUnsafeBytes { file.write($0, at: Int64(number) * Int64(pageSize)) }
    }

    /// The bytes of page `number`, `length` of them as written.
    func page(_ number: Int, length: Int) -> [UInt8] {
        cache.withLock {
            $0.page(number, length: length) { file.read(at: Int64($0) * Int64(pageSize), count: length) }
        }
    }
}
