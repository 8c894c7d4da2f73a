package import Foundation
package import FreshAir
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Digests of the files this process has read already, so that one `breeze release` reads
/// each file once: generate, the check before signing, validation and publishing each ask for
/// every digest (a bundle's file was read 5 times; a package, besides its install check, 4 times
/// on a release that changed nothing). A digest is reused only while the file is the same
/// inode with the same size, modification and change times; a tool that rewrites a file
/// (a new inode, or a new time) gets it read again. Not seen: a rewrite in place that keeps
/// the size within one tick of the file system's clock (milliseconds); breeze never rewrites a
/// file in place, and another program writing during a release races it anyway.
package enum FileDigests {
    private struct Key: Hashable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int
        var modifiedNanoseconds: Int
        var changed: Int
        var changedNanoseconds: Int
        var algorithm: ContentHash.Algorithm
    }

    private static let known = Mutex<[Key: (hash: ContentHash, size: Int64)]>([:])

    /// The digest and size of the regular file at `path`, or `nil` when there is none.
    package static func digest(
        atPath path: String,
        using algorithm: ContentHash.Algorithm,
        hasher: borrowing FileHasher
    ) throws -> (hash: ContentHash, size: Int64)? {
        let before = key(path, algorithm)
        if let before, let digest = known.withLock({ $0[before] }) { return digest }
        guard let digest = try hasher.hash(atPath: path, using: algorithm) else { return nil }
        // Remembered only if nothing changed the file while it was read.
        if let before, key(path, algorithm) == before { known.withLock { $0[before] = digest } }
        return digest
    }

    /// The same, for one file now and then (a buffer of its own).
    package static func digest(
        of url: URL,
        using algorithm: ContentHash.Algorithm
    ) throws -> (
        hash: ContentHash, size: Int64
    ) {
        let hasher = FileHasher()
        guard let digest = try digest(atPath: url.path, using: algorithm, hasher: hasher) else {
            return try ContentHash.ofFile(at: url, using: algorithm)  // its error names what is wrong
        }
        return digest
    }

    private static func key(_ path: String, _ algorithm: ContentHash.Algorithm) -> Key? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        #if canImport(Darwin)
        let (modified, changed) = (info.st_mtimespec, info.st_ctimespec)
        #else
        let (modified, changed) = (info.st_mtim, info.st_ctim)
        #endif
        return Key(
            device: UInt64(truncatingIfNeeded: info.st_dev),
            inode: UInt64(truncatingIfNeeded: info.st_ino),
            size: Int64(info.st_size),
            modified: Int(modified.tv_sec),
            modifiedNanoseconds: Int(modified.tv_nsec),
            changed: Int(changed.tv_sec),
            changedNanoseconds: Int(changed.tv_nsec),
            algorithm: algorithm
        )
    }
}
