import Foundation

/// The whole-repository switch (``Repository/Switching/wholeRepository``): `directory` is a
/// link to `snapshots/<n>/`, which holds every bundle's live version as hard links, and is
/// replaced in one `rename(2)` once every bundle the index names is installed.
///
/// Hard links make a snapshot cost one link per file, not a copy, and keep it valid whatever
/// the bundles' own stores later remove. A snapshot that a killed update was building is
/// removed by the next one; `snapshot.json` says which bundle versions which snapshot holds, so
/// an update that installed everything but was killed before the switch makes it next time.
struct RepositorySnapshot {
    let repository: Repository

    private var folder: String { repository.workFolder.appendingPathComponent("snapshots").path }
    private var recordPath: String { repository.workFolder.appendingPathComponent("snapshot.json").path }

    /// Builds and switches to a new snapshot when the live one does not hold exactly the live
    /// version of each of `names`; removes every other snapshot. Called with the lock held.
    func switchIfStale(names: [String]) throws {
        var wanted: [String: Int] = [:]
        for name in names {
            guard let id = repository.store(forBundle: name).liveVersionID else {
                // A bundle of the index is not installed (its download failed): the whole set
                // stays as it was.
                return
            }
            wanted[name] = id
        }
        let current = currentSnapshot()
        if let current, readRecord() == Record(snapshot: current, bundles: wanted) {
            removeSnapshots(except: current)
            return
        }
        try LiveLink.claim(repository.directory.path)
        let number = (Disk.contentsOfDirectory(folder).compactMap(Int.init).max() ?? 0) + 1
        let snapshot = folder + "/\(number)"
        try Disk.createDirectory(snapshot)
        for (name, id) in wanted.sorted(by: { $0.key < $1.key }) {
            try Self.linkTree(from: repository.store(forBundle: name).versionPath(id), to: snapshot + "/" + name)
        }
        try Disk.writeAtomically(try JSONEncoder().encode(Record(snapshot: number, bundles: wanted)), to: recordPath)
        try Durability.flush(linkedTree: snapshot, record: recordPath)
        try LiveLink.point(repository.directory, at: snapshot)
        removeSnapshots(except: number)
    }

    /// The snapshot number `directory` links to.
    private func currentSnapshot() -> Int? {
        guard let target = Disk.readLink(repository.directory.path) else { return nil }
        return Int(URL(fileURLWithPath: target).lastPathComponent)
    }

    /// `snapshot.json`: which snapshot holds which bundle versions. It counts only when
    /// `directory` links to that snapshot (a kill between the two leaves them apart).
    private struct Record: Codable, Equatable {
        var snapshot: Int
        var bundles: [String: Int]
    }

    private func readRecord() -> Record? {
        guard let data = FileManager.default.contents(atPath: recordPath) else { return nil }
        return try? JSONDecoder().decode(Record.self, from: data)
    }

    private func removeSnapshots(except keep: Int) {
        for name in Disk.contentsOfDirectory(folder) where Int(name) != keep { try? Disk.remove(folder + "/" + name) }
    }

    /// Recreates `source`'s tree at `destination`: folders made, files hard-linked, links copied.
    static func linkTree(from source: String, to destination: String) throws {
        try Disk.createDirectory(destination)
        for name in Disk.contentsOfDirectory(source) {
            let from = source + "/" + name
            let to = destination + "/" + name
            var info = stat()
            guard lstat(from, &info) == 0 else { throw Disk.failure("inspect", from) }
            switch info.st_mode & S_IFMT {
            case S_IFDIR: try linkTree(from: from, to: to)
            case S_IFLNK:
                guard let target = Disk.readLink(from), symlink(target, to) == 0 else {
                    throw Disk.failure("copy the link", to)
                }
            default: try Disk.link(from, to: to)
            }
        }
    }
}
