import Foundation

/// One download a system downloader makes for the next update: the bytes at `url`, which the
/// manifest gives as `size` bytes with SHA-256 `sha256` (hex), placed at `paths` (several when
/// files share bytes).
struct PlannedDelivery: Sendable, Hashable, Codable {
    var url: URL
    var size: Int64
    var sha256: String
    var paths: [String]
}

/// Files a system downloader delivered for the next update (`SystemDownloads`), kept where a
/// sync looks for an interrupted update's work: `interrupted/delivered/<path>`. The sync links
/// a file from there into the new version when its size and digest match the manifest's, and
/// removes the folder once a version goes live, as it does any interrupted work. The plan is
/// `delivered.json` beside the store's versions.
///
/// Every step runs with the store's lock, so an app and its extension can share one store: a
/// file never lands in a folder a finishing update is removing.
struct DeliveredFiles {
    let store: BundleStore

    var folder: String { store.interruptedPath + "/delivered" }
    private var planPath: String { store.root.appendingPathComponent("delivered.json").path }

    /// Runs `body` with the store's lock held, waiting for it on this thread (see
    /// ``StoreLock/holding(path:_:)``).
    func withLock<Result>(_ body: (DeliveredFiles) throws -> Result) throws -> Result {
        try Disk.createDirectory(store.root.path)
        return try StoreLock.holding(path: store.lockPath) { try body(self) }
    }

    func savePlan(_ downloads: [PlannedDelivery]) throws {
        let data = try JSONEncoder().encode(downloads)
        try Disk.writeAtomically(data, to: planPath)
    }

    /// The plan saved last; empty when there is none (or it is unreadable: plan again).
    func plan() -> [PlannedDelivery] {
        guard let data = FileManager.default.contents(atPath: planPath) else { return [] }
        return (try? JSONDecoder().decode([PlannedDelivery].self, from: data)) ?? []
    }

    /// The planned download `identifier` names, while it is still to come; `nil` when the plan
    /// does not list it, or it is here or live already.
    func stillWanted(_ identifier: String) throws -> PlannedDelivery? {
        try pending().first { $0.sha256 == identifier }
    }

    /// What the system has still to deliver: not here yet, and not live already (a sync of the
    /// app's own may have fetched it first).
    func pending() throws -> [PlannedDelivery] {
        let live = try? store.liveRecord()
        return plan().filter { !isDelivered($0) && !isLive($0, in: live) }
    }

    /// Whether every path of `download` holds a file of its size. Its digest was checked when
    /// it was kept, and the sync checks it again before it links it.
    func isDelivered(_ download: PlannedDelivery) -> Bool {
        download.paths.allSatisfy { path in
            (try? BundlePath(path)).map { Disk.status(folder + "/" + $0.string)?.size == download.size } ?? false
        }
    }

    /// Moves `file` (verified as `download`) to the first of its paths and links it at the
    /// others. `false` when it was already there.
    func keep(_ file: URL, as download: PlannedDelivery) throws -> Bool {
        guard !isDelivered(download), !isLive(download, in: try? store.liveRecord()) else { return false }
        var first: String?
        for text in download.paths {
            // Paths come from a verified manifest; the plan file is checked again all the same.
            let path: BundlePath
            do { path = try BundlePath(text) } catch {
                throw FreshAirError.unsafePath(path: text, reason: "a delivered file's path in \(planPath)")
            }
            let destination = folder + "/" + path.string
            try Disk.createDirectory(URL(fileURLWithPath: destination).deletingLastPathComponent().path)
            try Disk.remove(destination)
            if let first {
                try Disk.link(first, to: destination)
            } else {
                try Self.move(file.path, to: destination)
                first = destination
            }
        }
        return true
    }

    /// Whether the live version already has `download` at every path: a sync of the app's own
    /// got there first, and the delivery is not needed.
    private func isLive(_ download: PlannedDelivery, in live: VersionRecord?) -> Bool {
        guard let live else { return false }
        return download.paths.allSatisfy { live.file(at: $0)?.hash.hex == download.sha256 }
    }

    /// Ends the plan once its update is installed, with whatever was delivered for it: a sync
    /// that installed took what it needed (and removed the rest), one that found the release
    /// already live needed none.
    func forgetPlan() {
        try? Disk.remove(planPath)
        try? Disk.remove(folder)
    }

    /// A rename where the two are on one volume; else a copy, then the source removed.
    private static func move(_ source: String, to destination: String) throws {
        guard rename(source, destination) != 0 else { return }
        let code = errno
        guard code == EXDEV else { throw Disk.failure("move \(source) to", destination, code) }
        try Disk.link(source, to: destination)  // copies across volumes
        try? Disk.remove(source)
    }
}
