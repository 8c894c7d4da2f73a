import Foundation

/// An ext4 file system whose writes to its data blocks fail once a few megabytes have reached it,
/// as a worn or unplugged disk's do: its image lies on a tmpfs of `room` bytes, so the loop
/// device under it gets `ENOSPC` (and ext4 an I/O error) once the tmpfs is full, while `write`
/// calls keep landing in the page cache. Its journal lies on a device of its own, on the
/// ordinary disk, so the first error comes from write-back (`syncfs`), not from a journal that
/// gave up first; ext4 gives up on it at the next failed write of its own metadata, and creates
/// fail from then on. Needs root, `mount`, `losetup` and `mkfs.ext4`.
enum FailingDisk {
    static var isAvailable: Bool {
        LoopFileSystem.isAvailable("ext4") && FileManager.default.isExecutableFile(atPath: "/usr/sbin/losetup")
    }

    /// Makes the file system, runs `body` with its root, and takes it all down after, whether
    /// `body` returns or throws.
    static func with<Result>(room: Int, _ body: (URL) async throws -> Result) async throws -> Result {
        let folder = try TemporaryFolder("failing-disk")
        for name in ["backing", "mounted"] {
            try FileManager.default.createDirectory(at: folder.path(name), withIntermediateDirectories: true)
        }
        // Inode tables and the journal written now (not lazily, after mounting, into the room)
        // and few inodes, so the room is spent on what the test writes.
        let journal = try await shell(
            "mount -t tmpfs -o size=\(room) tmpfs backing && truncate -s 256M backing/image"
                + " && truncate -s 32M journal && /usr/sbin/mke2fs -q -O journal_dev -b 4096 journal"
                + " && losetup -f --show journal",
            in: folder.url
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        let takeDown = "umount mounted || umount -l mounted; losetup -d \(journal); umount backing || umount -l backing"
        return try await LoopFileSystem.running(
            {
                try await shell(
                    "/usr/sbin/mkfs.ext4 -q -b 4096 -N 8192 -E lazy_itable_init=0,nodiscard -J device=\(journal) backing/image"
                        + " && mount -o loop,journal_path=\(journal) backing/image mounted",
                    in: folder.url
                )
                return try await body(folder.path("mounted"))
            },
            thenInShell: takeDown,
            in: folder.url
        )
    }
}
