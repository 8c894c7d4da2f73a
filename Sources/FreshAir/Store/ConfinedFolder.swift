import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(CSystemCalls)
import CSystemCalls
#endif

/// The one way the engine writes into a version being assembled: every file, folder and link
/// is created relative to an open descriptor of the version's folder, never by a path the
/// kernel resolves from `/`.
///
/// Checks on paths (`BundlePath`) come first; this is what holds if one of them ever
/// misses. Each name is resolved below the folder with `openat2(RESOLVE_BENEATH |
/// RESOLVE_NO_SYMLINKS)` where the kernel has it (Linux 5.6 and later), else one component
/// at a time with `O_NOFOLLOW | O_DIRECTORY`, refusing `.`, `..` and empty names itself. No
/// link is followed on the way, not even one inside the folder; new files are created with
/// `O_EXCL` or `O_NOFOLLOW`, so an existing link is never written through.
final class ConfinedFolder: Sendable {
    /// The folder's path, for messages and for installers that take a URL.
    let path: String
    private let descriptor: Int32
    /// Folders already opened, for the next file in them.
    private let openFolders = OpenFolders(capacity: maxOpenFolders)
    static let maxOpenFolders = openFolderCap(openFileLimit: Disk.openFileLimit)
    /// Starts the disk on the files created here while more are being written (Linux).
    let flushAhead: FlushAhead?

    /// How many folder descriptors a folder keeps open: a quarter of the process's limit on open
    /// files, at most 256. A Mac or iOS app starts with a limit of 256, which 256 folders would
    /// take whole, leaving none for the connections and files of the same update.
    static func openFolderCap(openFileLimit: Int?) -> Int {
        guard let openFileLimit else { return 16 }
        return max(4, min(256, openFileLimit / 4))
    }

    init(path: String) throws(FreshAirError) {
        descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Disk.failure("open folder", path) }
        self.path = path
        flushAhead = FlushAhead(folder: descriptor)
    }

    deinit { close(descriptor) }

    #if os(Linux)
    /// Flushes the file system holding the folder (`syncfs(2)`) through the descriptor opened
    /// when this folder was: the kernel reports to it every write-back error since then, also one
    /// that another flush saw first (a descriptor opened later would miss that one).
    func flushFileSystem() throws(FreshAirError) {
        try Durability.flushFileSystem(holding: descriptor, path: path)
    }
    #endif

    /// Creates (or, with `replacing`, truncates) the file at `path`, creating its folders.
    func createFile(
        _ path: BundlePath,
        replacing: Bool,
        startsWriteback: Bool = true
    ) throws(FreshAirError) -> OutputFile {
        try inParent(of: path) { parent, name throws(FreshAirError) in
            let flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (replacing ? O_TRUNC : O_EXCL)
            let file = Self.openBeneath(parent, name, flags, 0o644)
            guard file >= 0 else { throw refusal("create", path) }
            if startsWriteback { flushAhead?.created() }
            return OutputFile(
                descriptor: file,
                path: self.path + "/" + path.string,
                empty: true,
                startsWriteback: startsWriteback
            )
        }
    }

    /// Opens the file this folder created at `path` to add to its end (a small download
    /// resumed by a retry).
    func appendToFile(_ path: BundlePath, startsWriteback: Bool = true) throws(FreshAirError) -> OutputFile {
        try inParent(of: path) { parent, name throws(FreshAirError) in
            let file = Self.openBeneath(parent, name, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0)
            guard file >= 0 else { throw refusal("reopen", path) }
            return OutputFile(
                descriptor: file,
                path: self.path + "/" + path.string,
                empty: false,
                startsWriteback: startsWriteback
            )
        }
    }

    /// Writes bytes held in memory (a manifest) at `path`.
    func write(_ data: Data, at path: BundlePath) throws(FreshAirError) {
        let file = try createFile(path, replacing: true, startsWriteback: false)
        defer { file.close() }
        var failure: FreshAirError?
        data.withUnsafeBytes { bytes in
            do throws(FreshAirError) { try file.write(bytes) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Creates the folder at `path` and any missing above it.
    func makeFolder(_ path: BundlePath) throws(FreshAirError) {
        if let folder = try folderDescriptor(path, create: true) { done(folder) }
    }

    /// Creates a symbolic link at `path` whose text is `target`. The target is the caller's
    /// to check: nothing here ever follows a link.
    func makeSymbolicLink(_ path: BundlePath, target: String) throws(FreshAirError) {
        try inParent(of: path) { parent, name throws(FreshAirError) in
            guard symlinkat(target, parent, name) == 0 else { throw refusal("create link", path) }
        }
    }

    /// Hard-links `path` to the file already at `existing`, both inside this folder.
    func hardLink(_ existing: BundlePath, at path: BundlePath) throws(FreshAirError) {
        try inParent(of: existing) { sourceParent, sourceName throws(FreshAirError) in
            try inParent(of: path) { parent, name throws(FreshAirError) in
                guard linkat(sourceParent, sourceName, parent, name, 0) == 0 else { throw refusal("link", path) }
            }
        }
    }

    /// Hard-links `path` to a file outside (an interrupted update's copy), copying where the
    /// file system cannot link.
    func link(external source: String, at path: BundlePath) throws(FreshAirError) {
        try inParent(of: path) { parent, name throws(FreshAirError) in
            if linkat(AT_FDCWD, source, parent, name, 0) == 0 { return }
            try copyWhereLinksFail(errno, from: source, at: path)
        }
    }

    /// Hard-links each of `paths` to the file at the same path in `source` (the live version's
    /// unchanged files), copying where the file system cannot link, and calls `linked` for each.
    /// Each link names its two files by their last components, below folders kept open: in path
    /// order, each folder on either side is opened once.
    func link(
        _ paths: some Sequence<BundlePath>,
        from source: FolderWalk,
        linked: (BundlePath) -> Void = { _ in }
    ) throws(FreshAirError) {
        for path in paths {
            try inParent(of: path) { parent, name throws(FreshAirError) in
                guard let (sourceFolder, sourceName) = source.parent(of: path.string) else {
                    throw Disk.failure("link \(source.path)/\(path) to", self.path + "/" + path.string, ENOENT)
                }
                if linkat(sourceFolder, sourceName, parent, name, 0) != 0 {
                    try copyWhereLinksFail(errno, from: source.path + "/" + path.string, at: path)
                }
            }
            linked(path)
        }
    }

    /// Copies `source` to `path` when a link failed with `code` because the file system cannot
    /// link (another volume, no hard links, too many); any other failure is thrown.
    private func copyWhereLinksFail(_ code: Int32, from source: String, at path: BundlePath) throws(FreshAirError) {
        guard code == EXDEV || code == EPERM || code == EMLINK || code == ENOTSUP else {
            throw Disk.failure("link \(source) to", self.path + "/" + path.string, code)
        }
        let output = try createFile(path, replacing: false, startsWriteback: false)
        defer { output.close() }
        do { try ArchiveReader.readChunks(of: source) { bytes in try output.write(bytes) } } catch let error
            as FreshAirError
        {
            throw error
        } catch {
            throw .fileSystem(
                operation: "copy \(source) to",
                path: self.path + "/" + path.string,
                reason: "\(error)",
                underlying: error
            )
        }
    }

    /// Moves a file from outside (a finished download) to `path`.
    func moveIn(_ source: String, at path: BundlePath) throws(FreshAirError) {
        try inParent(of: path) { parent, name throws(FreshAirError) in
            guard renameat(AT_FDCWD, source, parent, name) == 0 else {
                throw Disk.failure("move \(source) to", self.path + "/" + path.string)
            }
        }
    }

    /// Removes the file or link at `path`; absent (or its folder absent) is fine. Folders are
    /// not removed here.
    func remove(_ path: BundlePath) throws(FreshAirError) {
        guard let parent = try folderDescriptor(path.parent, create: false) else { return }
        defer { done(parent) }
        guard unlinkat(parent.descriptor, String(path.lastComponent), 0) == 0 || errno == ENOENT else {
            throw refusal("remove", path)
        }
    }

    /// Runs `body` with a descriptor of `path`'s folder (created when missing) and `path`'s last name.
    private func inParent<Result>(
        of path: BundlePath,
        _ body: (Int32, String) throws(FreshAirError) -> Result
    ) throws(FreshAirError) -> Result {
        guard let parent = try folderDescriptor(path.parent, create: true) else {
            throw refusal("open folder", path, ENOENT)
        }
        defer { done(parent) }
        return try body(parent.descriptor, String(path.lastComponent))
    }

    /// A folder's descriptor while a caller uses it, and what to do when it is done.
    private struct HeldFolder {
        let descriptor: Int32
        /// The folder whose kept descriptor this is, `nil` for the root or one opened for this use alone.
        let kept: BundlePath?
        /// Opened for this use alone: closed when done.
        let owned: Bool
    }

    /// Ends a use of `folder`: a kept descriptor is released for the next, one opened for this use closed.
    private func done(_ folder: HeldFolder) {
        if let kept = folder.kept { openFolders.release(kept) } else if folder.owned { close(folder.descriptor) }
    }

    /// A descriptor of `folder` (the root for `nil`), held until ``done(_:)``. `nil` when the
    /// folder does not exist and `create` is `false`.
    private func folderDescriptor(_ folder: BundlePath?, create: Bool) throws(FreshAirError) -> HeldFolder? {
        guard let folder else { return HeldFolder(descriptor: descriptor, kept: nil, owned: false) }
        if let open = openFolders.take(folder) { return HeldFolder(descriptor: open, kept: folder, owned: false) }
        let flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW
        var opened = Self.openBeneath(descriptor, folder.string, flags, 0)
        if opened < 0 {
            if errno == ENOENT, !create { return nil }
            guard errno == ENOENT else { throw refusal("open folder", folder) }
            let name = String(folder.lastComponent)
            guard let parent = try folderDescriptor(folder.parent, create: true) else {
                throw refusal("open folder", folder, ENOENT)
            }
            defer { done(parent) }
            guard mkdirat(parent.descriptor, name, 0o755) == 0 || errno == EEXIST else {
                throw refusal("create folder", folder)
            }
            opened = Self.openBeneath(parent.descriptor, name, flags, 0)
            guard opened >= 0 else { throw refusal("open folder", folder) }
        }
        guard let kept = openFolders.keep(opened, for: folder) else {
            return HeldFolder(descriptor: opened, kept: nil, owned: true)
        }
        return HeldFolder(descriptor: kept, kept: folder, owned: false)
    }

    /// Why a call failed: a link, a file or a `..` in the way is an attempt to leave the
    /// folder; anything else is an ordinary file-system failure.
    private func refusal(_ operation: String, _ path: BundlePath, _ code: Int32 = errno) -> FreshAirError {
        let shown = self.path + "/" + path.string
        switch code {
        case ELOOP, EXDEV:
            return .unsafePath(
                path: path.string,
                reason: "a symbolic link stands on the way; nothing is written through links"
            )
        case ENOTDIR:
            return .unsafePath(
                path: path.string,
                reason: "a file or a link stands where a folder should be; nothing is written through links"
            )
        case EEXIST: return .unsafePath(path: path.string, reason: "something is already there")
        default: return Disk.failure(operation, shown, code)
        }
    }

    /// Whether the kernel has `openat2`; cleared on the first `ENOSYS`.
    private static let hasOpenat2 = Atomic<Bool>(true)

    /// Opens `path` (relative, `/`-separated) below `directory` without following any link or
    /// leaving it.
    static func openBeneath(_ directory: Int32, _ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
        #if canImport(CSystemCalls) && os(Linux)
        if hasOpenat2.load(ordering: .relaxed) {
            let opened = freshair_open_beneath(directory, path, flags, UInt32(mode))
            if opened >= 0 || errno != ENOSYS { return opened }
            hasOpenat2.store(false, ordering: .relaxed)
        }
        #endif
        return openComponentByComponent(directory, path, flags, mode)
    }

    /// `openBeneath` without `openat2`: each folder opened with `O_NOFOLLOW | O_DIRECTORY`,
    /// `.`, `..` and empty names refused here whatever the caller checked.
    static func openComponentByComponent(_ directory: Int32, _ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
        let names = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map {
            String(Substring($0))
        }
        var current = directory
        defer { if current != directory { close(current) } }
        for (index, name) in names.enumerated() {
            guard !name.isEmpty, name != ".", name != ".." else {
                errno = EXDEV
                return -1
            }
            let isLast = index == names.count - 1
            let next =
                isLast
                ? openat(current, name, flags | O_NOFOLLOW, mode)
                : openat(current, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
            guard next >= 0 else { return -1 }
            if isLast { return next }
            if current != directory { close(current) }
            current = next
        }
        errno = EINVAL
        return -1
    }
}
