package import Foundation

extension ContentHash {
    /// Hashes a file on disk, reading it in 1 MiB pieces; also returns its size.
    package static func ofFile(at url: URL, using algorithm: Algorithm) throws -> (hash: ContentHash, size: Int64) {
        let (hash, size) = try Disk.hash(url.path, algorithm: algorithm)
        return (hash, size)
    }
}

/// Hashes many files one after another through one read buffer, as `breeze hash` does for
/// thousands of small files: no allocation and no `stat` per file.
package struct FileHasher: ~Copyable {
    private let buffer: UnsafeMutableRawBufferPointer

    /// Reads files through a buffer of `bufferSize` bytes.
    package init(bufferSize: Int = 256 << 10) {
        buffer = .allocate(byteCount: bufferSize, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// The digest and size of the file at `path`, or `nil` when there is none.
    package func hash(
        atPath path: String,
        using algorithm: ContentHash.Algorithm
    ) throws -> (hash: ContentHash, size: Int64)? {
        try Disk.hashIfPresent(path, algorithm: algorithm, buffer: buffer).map { (hash: $0.0, size: $0.1) }
    }
}
