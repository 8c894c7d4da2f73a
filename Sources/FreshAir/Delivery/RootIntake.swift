import Foundation

/// Selects a root manifest's files as the parser reads its entries, so that a sync never holds
/// a list of every entry beside the list of selected files (8.8 MB at 100,000 entries).
///
/// It selects exactly as the walk of a parsed manifest does, and answers the same errors in the
/// same order. The errors the walk raises only once the whole document is read and checked
/// (its signature, identity and sequence first) are noted here and raised by the walk at that
/// point: an entry with no SHA-256 in the object layout, then one this device selects that is
/// broken, then two spellings of one name. Unsigned roots only: a signed root must give every
/// entry's digest, which is checked once its signature is.
///
/// At the first child manifest this device selects, it stops taking: the child's files come at
/// its place in document order, so the walk selects the rest of the entries, as it always did.
final class RootIntake: ManifestEntryTaker {
    let environment: ConditionEnvironment
    /// The selection so far (moved in before the parse and out after it, not copied).
    var files: SelectedFiles
    /// Selected files that are exactly the live version's (see ``ManifestTree/Selection/sameAsLive``).
    var sameAsLive: [Int32] = []
    var seen: PathCollisions
    /// Entries taken (selected, or left to other devices).
    private(set) var taken = 0
    /// Entries taken whose conditions this device does not meet.
    private(set) var otherDevices = 0
    /// The index of the first entry left in the manifest, once one is.
    private(set) var keptFrom: Int?
    /// The first selected entry without a SHA-256, by its index.
    private(set) var firstWithoutSHA256: (index: Int, entry: ManifestEntry)?
    /// The first selected entry that is broken, by its index.
    private(set) var firstBroken: (index: Int, entry: ManifestEntry)?
    /// Two spellings of one name, found at the entry that brought the second.
    private(set) var collision: BundlePath.Rejection?

    /// Paths whose text is shared rather than kept again: the live version's.
    let livePaths: FileTable

    init(
        environment: ConditionEnvironment,
        files: SelectedFiles,
        seen: PathCollisions,
        livePaths: FileTable = FileTable()
    ) {
        self.environment = environment
        self.files = files
        self.seen = seen
        self.livePaths = livePaths
    }

    func expect(_ count: Int) {
        // An update selects most files as the live version's: room for their places, not for
        // a selected file each (the few that changed grow their own list).
        if livePaths.isEmpty { files.reserveCapacity(files.count + count) } else { sameAsLive.reserveCapacity(count) }
        // The set holds folders too: room for one per 16 files, so that a bundle of full
        // folders never regrows it (a quarter more, with both copies held for the move: 1 MB
        // more at the heap's peak of a first sync of 200,000 files in folders of 100).
        seen.reserveCapacity(count + count / 16)
    }

    func take(_ entry: ManifestEntry, at index: Int) -> Bool {
        guard keptFrom == nil else { return false }
        guard entry.condition.evaluate(in: environment) else {
            taken += 1  // another device's entry, whole or broken
            otherDevices += 1
            return true
        }
        if entry.isChildManifest {
            keptFrom = index
            return false
        }
        taken += 1
        if entry.hash?.algorithm != .sha256, firstWithoutSHA256 == nil { firstWithoutSHA256 = (index, entry) }
        if entry.defect != nil {
            if firstBroken == nil { firstBroken = (index, entry) }
            return true
        }
        // After an error the selection is no use: the walk throws it.
        guard collision == nil, firstBroken == nil else { return true }
        // The same bytes as a live path. Bytes, not `String` equality: a name spelled in another
        // Unicode normalization is the manifest's to keep.
        let path = entry.path
        let place = livePaths.index(of: path.string).flatMap { place in
            livePaths.hasPath(at: place, spelledAs: path.string) ? place : nil
        }
        var exactlyAsLive: Int?
        if let place, let hash = entry.hash, let size = entry.size,
            livePaths.record(at: place) == FileRecord(hash: hash, size: size)
        {
            exactlyAsLive = place
        }
        do {
            // The first entry for a path wins. The set of names reads it where it is kept.
            let kept = exactlyAsLive.map { UInt32($0) | ManifestTree.Selection.livePlace } ?? UInt32(files.count)
            guard try seen.insert(path, as: kept, spelledIn: pathBytes) else { return true }
        } catch {
            collision = error
            return true
        }
        if let exactlyAsLive {
            sameAsLive.append(Int32(exactlyAsLive))
        } else {
            files.append(SelectedFile(path: path, hash: entry.hash, size: entry.size))
        }
        return true
    }

    /// The bytes of a path the set of names refers to (``ManifestTree/Selection/livePlace``).
    private func pathBytes(_ place: UInt32) -> ArraySlice<UInt8> {
        ManifestTree.Selection.pathBytes(at: place, files: files, live: livePaths)
    }
}
