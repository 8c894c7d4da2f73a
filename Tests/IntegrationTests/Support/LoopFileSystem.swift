import Foundation

/// A file system of its own, on a loop device: XFS (which shares blocks between files) or ext4
/// (which cannot), for the tests of what FreshAir does on each. Needs root, `mount`, and the
/// file system's `mkfs` (scripts/test installs xfsprogs).
enum LoopFileSystem {
    /// Whether this machine can make and mount one of `type`.
    static func isAvailable(_ type: String) -> Bool {
        geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/mkfs.\(type)")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/mount")
    }

    /// Makes a file system of `type` and `size` (512 MB by default) on a sparse image, mounts it,
    /// runs `body` with its root, and unmounts it whether `body` returns or throws (lazily when a
    /// store the test made still holds a folder open: it goes when the store does).
    static func with<Result>(
        _ type: String,
        size: String = "512M",
        _ body: (URL) async throws -> Result
    ) async throws -> Result {
        let folder = try TemporaryFolder("loop-\(type)")
        let root = folder.path("mounted")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try await shell(
            "truncate -s \(size) image && /usr/sbin/mkfs.\(type) -q image && mount -o loop image mounted",
            in: folder.url
        )
        return try await running(
            { try await body(root) },
            thenInShell: "umount mounted || umount -l mounted",
            in: folder.url
        )
    }

    /// Runs `body`, then the shell command `takeDown` in `folder`, whether `body` returns or
    /// throws (`body`'s error is the one thrown).
    static func running<Result>(
        _ body: () async throws -> Result,
        thenInShell takeDown: String,
        in folder: URL
    ) async throws -> Result {
        let result: Result
        do {
            result = try await body()
        } catch {
            _ = try? await shell(takeDown, in: folder)
            throw error
        }
        try await shell(takeDown, in: folder)
        return result
    }

    /// How many of the file's extents `filefrag` reports as shared with another file.
    static func sharedExtents(of file: URL) async throws -> Int {
        let report = try await shell("filefrag -v '\(file.path)'", in: file.deletingLastPathComponent())
        return report.split(separator: "\n").filter { $0.contains("shared") }.count
    }
}
