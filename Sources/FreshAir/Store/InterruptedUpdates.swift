import Foundation

/// What an update that did not finish leaves behind, kept so that the next update can reuse
/// it instead of downloading it again.
///
/// A killed or failed update can leave a staged folder with some files already downloaded and
/// verified, or a whole version assembled in `versions/` that the live link never reached.
/// Each is moved to `interrupted/` when the next update starts; that update hard-links any
/// file it needs from there when the file's size and digest match what its manifest lists,
/// and removes `interrupted/` once it has activated.
extension BundleStore {
    var interruptedPath: String { root.appendingPathComponent("interrupted").path }

    /// Moves leftover staging folders, and versions newer than the live one that never went
    /// live, to `interrupted/`. Called with the store's lock held, before an update begins.
    /// A staged folder another update is still filling (``FolderLease``) stays where it is.
    func setAsideInterruptedWork(liveID: Int?) throws {
        var leftovers = unheldStagedFolders()
        for staged in leftovers { FolderLease.drop(staged) }
        // Owner files whose folder is gone (a process killed between the two writes).
        for name in Disk.contentsOfDirectory(stagingPath) where name.hasSuffix(".owner") {
            let staged = stagingPath + "/" + name.dropLast(".owner".count)
            if !Disk.exists(staged), !FolderLease.isHeld(staged, now: environment.now()) { FolderLease.drop(staged) }
        }
        for name in Disk.contentsOfDirectory(versionsPath) {
            // The record first (or alone): a version without one never went live.
            guard let id = Int(name), id > (liveID ?? 0), Disk.isDirectory(versionPath(id)) else { continue }
            try Disk.remove(recordPath(id))
            leftovers.append(versionPath(id))
        }
        try setAside(leftovers)
    }

    /// Moves `folders` (staged or unfinished versions) to `interrupted/`.
    func setAside(_ folders: [String]) throws {
        guard !folders.isEmpty else { return }
        try Disk.createDirectory(interruptedPath)
        for leftover in folders {
            let destination = interruptedPath + "/" + URL(fileURLWithPath: leftover).lastPathComponent
            try Disk.remove(destination)
            try Disk.rename(leftover, to: destination)
        }
    }

    /// The partials folder for an update starting now, with the lock held: the store's
    /// `partials/` (whose interrupted downloads it resumes), unless another update that let go
    /// of the lock is downloading into it; then a folder of this update's own, removed when it
    /// ends. Own folders that a killed update left are removed here.
    func claimPartials() throws -> String {
        for name in Disk.contentsOfDirectory(root.path) where name.hasPrefix("partials-") && !name.hasSuffix(".owner") {
            let folder = root.path + "/" + name
            if !FolderLease.isHeld(folder, now: environment.now()) {
                try Disk.remove(folder)
                FolderLease.drop(folder)
            }
        }
        if !FolderLease.isHeld(partialsPath, now: environment.now()) {
            try FolderLease.claim(partialsPath)
            return partialsPath
        }
        let own = root.path + "/partials-" + UUID().uuidString.prefix(8)
        try FolderLease.claim(own)
        try Disk.createDirectory(own)
        return own
    }

    /// Ends an update's claim on its partials folder (see ``claimPartials()``).
    func releasePartials(_ folder: String) {
        if folder != partialsPath { try? Disk.remove(folder) }
        FolderLease.drop(folder)
    }

    /// The folders interrupted updates left, newest first: listed once per update, since most
    /// updates have none and a lookup per downloaded file would cost a listing each.
    func interruptedFolders() -> [String] {
        Disk.contentsOfDirectory(interruptedPath).sorted(by: >).map { interruptedPath + "/" + $0 }
    }

    /// Which of `folders` holds a file at `path` with exactly this size and digest (its place
    /// in `folders`), or `nil`.
    func interruptedCopy(of path: BundlePath, hash: ContentHash, size: Int64, in folders: [String]) -> Int? {
        for (place, folder) in folders.enumerated() {
            let candidate = folder + "/" + path.string
            // A regular file of the right size (Disk.status answers for regular files only), then its digest.
            guard Disk.status(candidate)?.size == size,
                let (digest, _) = try? Disk.hash(candidate, algorithm: hash.algorithm), digest == hash
            else { continue }
            return place
        }
        return nil
    }

    /// The second pass on a full disk: what interrupted updates left only saves downloads, so it
    /// goes, under the lock: `interrupted/`, and staged folders no update holds (left where they
    /// were when the disk had no room to set them aside). Answers whether there was anything to
    /// drop (and so whether trying again can help).
    func dropInterruptedWorkForSpace() async throws -> Bool {
        let lock = try await takeLock()
        defer { lock.release() }
        let unheld = unheldStagedFolders()
        guard Disk.exists(interruptedPath) || !unheld.isEmpty else { return false }
        try removeInterruptedWork()
        for folder in unheld { try Disk.remove(folder) }
        return true
    }

    /// Whether earlier updates left work behind (set aside, or staged and no longer held): read
    /// without the lock, as a run begins, to know whether a full disk may be made room on.
    func hasInterruptedWork() -> Bool {
        Disk.exists(interruptedPath) || !unheldStagedFolders().isEmpty
    }

    private func unheldStagedFolders() -> [String] {
        let now = environment.now()
        return Disk.contentsOfDirectory(stagingPath).filter { !$0.hasSuffix(".owner") }.map { stagingPath + "/" + $0 }
            .filter { !FolderLease.isHeld($0, now: now) }
    }

    /// Forgets what interrupted updates left, once a new version is live.
    func removeInterruptedWork() throws {
        try Disk.remove(interruptedPath)
    }
}
