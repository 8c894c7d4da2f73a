import Foundation

/// The store's state kept twice where the platform keeps no file for certain: tvOS may purge
/// any folder of an app, Application Support included, and keeps only the app's defaults
/// (about 500 KB). What must outlive a purge (the install ID behind rollout buckets, the
/// anti-rollback marks, rotated keys, what was rolled back from) is a few small files; each
/// run of a ``FreshAirContent`` on tvOS puts back the ones a purge took and saves them after.
struct StateMirror {
    let defaults: UserDefaults
    /// The defaults key: one per store (`FreshAir.state.App.state`).
    let key: String
    let folder: URL

    /// The mirror of `store`'s state folder in `defaults`.
    init(store: BundleStore, defaults: UserDefaults = .standard) {
        self.defaults = defaults
        self.folder = store.stateFolder
        self.key = "FreshAir.state." + store.stateFolder.lastPathComponent
    }

    /// The most bytes mirrored: the defaults are small, and shared with the app's own.
    static let maxBytes = 64 << 10

    /// The files to put back: those the mirror holds and the folder lacks. A file on disk is
    /// never replaced, since it was written since the mirror was (the mirror is saved after
    /// each run). A decision with no I/O, so it is tested alone.
    static func restorations(onDisk: Set<String>, mirrored: [String: Data]) -> [String: Data] {
        mirrored.filter { name, _ in StoragePlan.stateFiles.contains(name) && !onDisk.contains(name) }
    }

    /// Puts back what a purge took. Nothing to do on a first launch or after an app update.
    func restore() throws {
        guard let mirrored = defaults.dictionary(forKey: key) as? [String: Data] else { return }
        let onDisk = Set(StoragePlan.stateFiles.filter { Disk.exists(folder.appendingPathComponent($0).path) })
        for (name, data) in Self.restorations(onDisk: onDisk, mirrored: mirrored) {
            try Disk.writeAtomically(data, to: folder.appendingPathComponent(name).path)
        }
    }

    /// Saves the state files as they are now, when they changed and fit.
    func save() {
        var files: [String: Data] = [:]
        for name in StoragePlan.stateFiles {
            if let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) {
                files[name] = data
            }
        }
        guard files.values.reduce(0, { $0 + $1.count }) <= Self.maxBytes,
            (defaults.dictionary(forKey: key) as? [String: Data]) != files
        else { return }
        defaults.set(files, forKey: key)
    }
}
