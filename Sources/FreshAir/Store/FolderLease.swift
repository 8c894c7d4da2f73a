import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Which folders belong to an update still running: staged versions and partials folders.
///
/// An update lets go of the store's lock while it downloads (see ``StoreLock``), so another
/// update can start meanwhile and must not take a folder that is still being filled for an
/// interrupted one. Each such folder (`staging/8/`, `partials/`) has an owner file beside it
/// (`staging/8.owner`, `partials.owner`) naming the process that fills it; the folder counts as
/// abandoned once that process is gone, or after a day, whichever comes first (a process
/// number can be reused).
enum FolderLease {
    /// How long a lease holds at most, whatever its process.
    static let longest: TimeInterval = 24 * 60 * 60

    static func ownerPath(of folder: String) -> String { folder + ".owner" }

    /// Marks `folder` as this process's, before the folder exists.
    static func claim(_ folder: String) throws(FreshAirError) {
        // In place and unflushed: claims are made and checked under the store's lock, and a
        // crash that could lose the file ends the process it names.
        try Disk.writeInPlace(Data("\(getpid())\n".utf8), to: ownerPath(of: folder))
    }

    /// Ends the lease on `folder`, once it went live, was set aside or was removed.
    static func drop(_ folder: String) {
        try? Disk.remove(ownerPath(of: folder))
    }

    /// Whether an update still fills `folder`, at `now` (the store's clock).
    static func isHeld(_ folder: String, now: Date) -> Bool {
        let owner = ownerPath(of: folder)
        guard let data = try? Disk.read(owner), let modified = Disk.status(owner)?.modified else { return false }
        let pid = Int32(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        return isHeld(
            owner: pid,
            age: now.timeIntervalSince1970 - modified,
            processExists: { kill($0, 0) == 0 || errno == EPERM }
        )
    }

    /// The decision, apart from the file system: a lease holds while its process exists
    /// (`kill(pid, 0)` succeeds, or is refused, which also means it exists), for a day at most.
    static func isHeld(owner pid: Int32?, age: TimeInterval, processExists: (Int32) -> Bool) -> Bool {
        guard let pid, pid > 0, age < longest else { return false }
        return processExists(pid)
    }
}
