import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Which staged folders belong to an update still running.
///
/// An update lets go of the store's lock while it downloads (see ``StoreLock``), so another
/// update can start meanwhile and must not take a staged folder that is still being filled
/// for an interrupted one. Each staged folder `staging/8/` has an owner file `staging/8.owner`
/// naming the process that fills it; the folder counts as interrupted once that process is
/// gone, or after a day, whichever comes first (a process number can be reused).
enum StagingLease {
    /// How long a lease holds at most, whatever its process.
    static let longest: TimeInterval = 24 * 60 * 60

    static func ownerPath(of staged: String) -> String { staged + ".owner" }

    /// Marks `staged` as this process's, before the folder exists.
    static func claim(_ staged: String) throws(FreshAirError) {
        try Disk.writeAtomically(Data("\(getpid())\n".utf8), to: ownerPath(of: staged))
    }

    /// Ends the lease on `staged`, once the folder went live or was set aside.
    static func drop(_ staged: String) {
        try? Disk.remove(ownerPath(of: staged))
    }

    /// Whether an update still fills `staged`.
    static func isHeld(_ staged: String) -> Bool {
        let owner = ownerPath(of: staged)
        guard let data = try? Disk.read(owner), let modified = Disk.status(owner)?.modified else { return false }
        let pid = Int32(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        return isHeld(
            owner: pid,
            age: Date().timeIntervalSince1970 - modified,
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
