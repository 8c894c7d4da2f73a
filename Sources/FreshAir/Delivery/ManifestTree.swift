import Foundation
import Synchronization

/// Walks a manifest and its child manifests, selecting what applies to one environment.
///
/// Children live in their own folder: `Embed1.freshair/manifest.json` lists `bar.md`, found
/// at `Embed1.freshair/bar.md`. Where a child's bytes come from is the caller's business
/// (`loadChild`): the network or the live version for a sync, the disk for an author's folder.
struct ManifestTree {
    /// The bundle folder's URL (ending in `/`), named in errors.
    let baseURL: URL
    let environment: ConditionEnvironment
    let maxDepth: Int
    /// A child manifest's bytes, checked against its digest in the parent when it has one;
    /// `fetched` tells whether they crossed the network. The root's layout says where on the
    /// server it is.
    /// The last argument is the most bytes the child may have: what the tree's budget has left.
    let loadChild: @Sendable (BundlePath, ContentHash?, ContentLayout, Int) async throws -> (data: Data, fetched: Bool)
    /// How many child manifests of one manifest are loaded at once.
    var concurrency = 8
    /// When set, the root must be signed by these keys (to their threshold) and every entry,
    /// in every manifest, must have a digest: the signature then covers the whole tree.
    var keys: KeySet?
    /// The most bytes all manifests of the tree may add up to: a server cannot make a device
    /// hold many large child manifests at once. Children loaded together share it as they
    /// load (`ManifestBudget`), so the bytes in flight never pass it either.
    var maxTotalBytes = Int.max
    /// The most bytes one manifest may have.
    var maxDocumentBytes = Int.max
    /// The most entries all manifests of the tree may list, selected or not: memory grows with
    /// entries, and a server must not choose how much.
    var maxEntries = Int.max
    /// The live version's files: a root entry naming one of them takes its path's text from
    /// there, so that an update does not hold each path twice (6.4 MB at 100,000 files).
    var livePaths = FileTable()
    /// Where the selection's digests and sizes go once it has more than ``spillAfter`` files (an
    /// update's partials folder; see ``DigestsAndSizes``); `nil` keeps them in memory.
    var spillFolder: String?
    var spillAfter = 1_600
    /// Whether an unsigned root's entries are selected as they are read (`RootIntake`), rather
    /// than from the parsed list; off only to compare the two.
    var selectsWhileReading = true
    /// Checks the root manifest once its signature is verified, before any child is loaded:
    /// a stale or substituted root costs no further request.
    var acceptRoot: (@Sendable (Manifest) throws -> Void)?

    /// What a walk found: the selected files and the root manifest's own fields.
    struct Selection {
        /// Every selected file, manifests included, root first; the first entry for a path wins;
        /// but those in ``sameAsLive``.
        var files = SelectedFiles()
        /// Selected files that a root's entry names exactly as the live version has them (the
        /// same bytes of path, the same digest and size), as places in ``ManifestTree/livePaths``:
        /// an update of 10 files in 100,000 held a selected file for each of the others (7.2 MB,
        /// at the heap's peak). Filled while an unsigned root is read (`RootIntake`).
        var sameAsLive: [Int32] = []
        /// The bytes of the manifests among ``files``, by path (a spilled root's are on disk).
        var documents: [BundlePath: SelectedDocument] = [:]
        /// The root manifest's publisher sequence and expiry (object form).
        var sequence: Int?
        var expires: Date?
        /// What the root manifest says it is (`identity`), checked against what the app expects.
        var identity: String?
        /// Where the root manifest says the files are.
        var layout = ContentLayout.paths
        /// The root manifest's pack of small files, if it names one.
        var pack: FilePack?
        /// The keys the root manifest names in its signatures, checked only when keys are pinned.
        var signers: [String] = []
        /// Entries of the manifests walked whose conditions this device does not meet (a child
        /// manifest's counts as one: its own entries are never read).
        var otherDevices = 0

        /// A selected path's place, as the set of names keeps it: its position in ``files``,
        /// or, with this bit, in the live version's table (``sameAsLive``).
        static let livePlace: UInt32 = 1 << 31

        /// The bytes of the path at `place` (see ``livePlace``).
        func pathBytes(at place: UInt32, live: FileTable) -> ArraySlice<UInt8> {
            Self.pathBytes(at: place, files: files, live: live)
        }

        static func pathBytes(at place: UInt32, files: SelectedFiles, live: FileTable) -> ArraySlice<UInt8> {
            place & livePlace != 0 ? live.pathBytes(at: Int(place & ~livePlace)) : files.pathBytes(at: Int(place))
        }
    }

    /// Selects from the root manifest `data` down. With `spilledAs`, the root's bytes are on disk
    /// with that digest: the root is selected without them, and `data` is let go once parsed.
    /// `letGo` is told, as the root's list is read, which of its bytes are read (see
    /// `MappedFile`).
    func select(
        root data: consuming Data,
        fetched: Bool,
        spilledAs digest: ContentHash? = nil,
        letGo: ((_ before: Int) -> Void)? = nil
    ) async throws
        -> Selection
    {
        let rootPath = BundlePath(trusted: "manifest.json")
        let size = Int64(data.count)
        var files = SelectedFiles(spillingTo: spillFolder, bufferFiles: spillAfter)
        files.append(SelectedFile(path: rootPath, hash: digest, size: size))
        var selection = Selection(files: files)
        if digest == nil { selection.documents[rootPath] = SelectedDocument(data: copy data, fetched: fetched) }
        var seen = PathCollisions()
        try seen.insert(rootPath, as: 0) { selection.pathBytes(at: $0, live: livePaths) }
        let budget = ManifestBudget(
            limit: maxTotalBytes,
            entryLimit: maxEntries,
            source: url(for: rootPath).absoluteString
        )
        try budget.spend(Int(size))
        try await walk(
            consume data,
            folder: nil,
            source: url(for: rootPath).absoluteString,
            depth: 0,
            layout: .paths,
            into: &selection,
            seen: &seen,
            budget: budget,
            letGo: letGo
        )
        // The set of names saw whether a file is also a folder as the paths went in: only then
        // are the paths sorted, to name the first such pair, once the names are let go.
        let fileIsAFolder = seen.sawFileThatIsAFolder
        seen = PathCollisions()
        if fileIsAFolder { try checkNoFileIsAlsoAFolder(selection) }
        return selection
    }

    private func walk(
        _ data: consuming Data,
        folder: BundlePath?,
        source: String,
        depth: Int,
        layout rootLayout: ContentLayout,
        into selection: inout Selection,
        seen: inout PathCollisions,
        budget: ManifestBudget,
        letGo: ((_ before: Int) -> Void)? = nil
    ) async throws {
        guard depth <= maxDepth else {
            throw FreshAirError.manifest(ManifestError(source: source, problem: .tooDeep(limit: maxDepth)))
        }
        let (manifest, intake) = try read(
            consume data,
            source: source,
            depth: depth,
            budget: budget,
            letGo: letGo,
            into: &selection,
            seen: &seen
        )
        if depth == 0 {
            try acceptRoot?(manifest)
            (selection.sequence, selection.expires, selection.identity, selection.layout, selection.pack) = (
                manifest.sequence, manifest.expires, manifest.identity, manifest.layout, manifest.pack
            )
            selection.signers = manifest.signatures.map(\.key)
        }
        let layout = depth == 0 ? manifest.layout : rootLayout
        let applicable = try entries(of: manifest, applyingHere: layout, source: source, intake: intake)
        selection.otherDevices += (intake?.otherDevices ?? 0) + manifest.entries.count - applicable.count
        // This manifest's children are loaded together; the walk below still takes them in
        // document order, so the result is the same as loading them one by one.
        let children = try await loadAll(
            budget: budget,
            layout: layout,
            applicable.filter(\.isChildManifest).map { (BundlePath.join(folder, $0.path), $0.hash, $0.size) }
                .filter { path, _, _ in !seen.contains(path) { selection.pathBytes(at: $0, live: livePaths) } }
        )
        // The root's entries at once (a child's grow the list: reserving for each would copy it).
        if depth == 0, intake == nil {
            selection.files.reserveCapacity(selection.files.count + applicable.count)
            seen.reserveCapacity(applicable.count)
        }
        // Two spellings among the entries taken while reading: refused where the loop below would.
        if let collision = intake?.collision {
            throw FreshAirError.manifest(ManifestError(source: source, problem: .unsafePath(collision)))
        }
        for entry in applicable {
            let path = BundlePath.join(folder, entry.path)
            // The first entry for a path wins; two spellings of one name on a device are refused.
            guard try isNew(path, in: selection, seen: &seen, source: source) else { continue }
            guard entry.isChildManifest else {
                selection.files.append(SelectedFile(path: path, hash: entry.hash, size: entry.size))
                continue
            }
            let (childData, fetched) =
                if let loaded = children[path.string] {
                    loaded
                } else {
                    try await load(path, entry.hash, layout, budget, wanted: claim(for: entry.size))
                }
            selection.files.append(SelectedFile(path: path, hash: entry.hash, size: Int64(childData.count)))
            selection.documents[path] = SelectedDocument(data: childData, fetched: fetched)
            try await walk(
                childData,
                folder: path.parent,
                source: layout.url(for: path, hash: entry.hash, base: baseURL).absoluteString,
                depth: depth + 1,
                layout: layout,
                into: &selection,
                seen: &seen,
                budget: budget
            )
        }
    }

    /// Records `path`'s name, to be kept as the next of `selection`'s files; answers whether it
    /// is new.
    private func isNew(
        _ path: BundlePath,
        in selection: Selection,
        seen: inout PathCollisions,
        source: String
    ) throws -> Bool {
        do {
            return try seen.insert(path, as: UInt32(selection.files.count)) {
                selection.pathBytes(at: $0, live: livePaths)
            }
        } catch {
            throw FreshAirError.manifest(ManifestError(source: source, problem: .unsafePath(error)))
        }
    }

    /// Reads one manifest of the tree and counts its entries. An unsigned root's entries are
    /// selected as they are read (`RootIntake`): the selection and the set of names move into
    /// the intake for the parse, and back.
    private func read(
        _ data: consuming Data,
        source: String,
        depth: Int,
        budget: ManifestBudget,
        letGo: ((_ before: Int) -> Void)?,
        into selection: inout Selection,
        seen: inout PathCollisions
    ) throws -> (Manifest, RootIntake?) {
        let intake =
            depth == 0 && keys == nil && selectsWhileReading
            ? RootIntake(environment: environment, files: [], seen: seen, livePaths: livePaths) : nil
        if let intake { (intake.files, selection.files, seen) = (selection.files, [], PathCollisions()) }
        let manifest = try parse(data, source: source, isRoot: depth == 0, budget: budget, letGo: letGo, taker: intake)
        _ = consume data  // a spilled root's bytes go now, before its entries are selected
        if let intake {
            (selection.files, seen, intake.files, intake.seen) = (intake.files, intake.seen, [], .init())
            (selection.sameAsLive, intake.sameAsLive) = (intake.sameAsLive, [])
        }
        try budget.count(entries: (intake?.taken ?? 0) + manifest.entries.count, in: source)
        return (manifest, intake)
    }

    /// Reads one manifest of the tree, within what the tree's budget has left; with keys, the
    /// root must be signed by them and every child must give each entry's digest.
    private func parse(
        _ data: Data,
        source: String,
        isRoot: Bool,
        budget: ManifestBudget,
        letGo: ((_ before: Int) -> Void)?,
        taker: RootIntake?
    ) throws -> Manifest {
        do {
            let manifest = try Manifest(
                data: data,
                source: source,
                maxEntries: budget.entriesLeft,
                requireSignature: isRoot && keys != nil,
                letGo: letGo,
                taker: taker
            )
            if let keys {
                if isRoot {
                    try manifest.verify(keys, source: source)
                } else {
                    try manifest.requireDigests(source: source)
                }
            }
            return manifest
        } catch {
            // Named with the tree's cap: what this manifest was allowed is what the others left.
            if case .tooManyEntries = error.problem { throw budget.tooManyEntries(in: source) }
            throw FreshAirError.manifest(error)
        }
    }

    /// The entries of `manifest` whose conditions hold on this device, each whole: an entry
    /// this device selects must be, while a broken one it skips is another device's business.
    /// What `intake` took while reading comes first in the document, and so in the checks.
    private func entries(
        of manifest: Manifest,
        applyingHere layout: ContentLayout,
        source: String,
        intake: RootIntake?
    ) throws -> [ManifestEntry] {
        func failure(_ index: Int, _ entry: ManifestEntry, _ problem: ManifestEntry.Problem) -> FreshAirError {
            .manifest(
                ManifestError(source: source, problem: .entry(index: index, filename: entry.path.string, problem))
            )
        }
        // The entries left in the manifest follow those taken: their index in the document.
        let offset = intake?.keptFrom ?? 0
        // Most manifests select every entry on every device: then the list is shared, not copied.
        let applicable =
            manifest.entries.allSatisfy { $0.condition.evaluate(in: environment) }
            ? manifest.entries : manifest.entries.filter { $0.condition.evaluate(in: environment) }
        if case .objects = layout {
            if let (index, entry) = intake?.firstWithoutSHA256 {
                throw failure(index, entry, entry.defect ?? .noSHA256InObjectLayout)
            }
            do { try manifest.requireObjectDigests(applicable, source: source, firstIndex: offset) } catch {
                throw FreshAirError.manifest(error)
            }
        }
        if let (index, entry) = intake?.firstBroken { throw failure(index, entry, entry.defect!) }
        if let index = manifest.entries.firstIndex(where: { $0.defect != nil && $0.condition.evaluate(in: environment) }
        ) {
            throw failure(offset + index, manifest.entries[index], manifest.entries[index].defect!)
        }
        return applicable
    }

    func url(for path: BundlePath) -> URL { path.url(relativeTo: baseURL) }

    /// Loads child manifests, up to ``concurrency`` at a time; the first failure ends it.
    /// A child starts only once its bytes are claimed from the tree's budget, so the loads
    /// under way never hold more than the budget between them, whatever the concurrency.
    private func loadAll(
        budget: ManifestBudget,
        layout: ContentLayout,
        _ children: [(BundlePath, ContentHash?, Int64?)]
    ) async throws -> [String: (data: Data, fetched: Bool)] {
        guard children.count > 1 else { return [:] }  // one child: the walk loads it itself
        let tree = self
        return try await withThrowingTaskGroup(of: (String, (data: Data, fetched: Bool)).self) { group in
            var pending = children[...]
            var loaded: [String: (data: Data, fetched: Bool)] = [:]
            var running = 0
            func startWhileRoom() throws {
                while running < max(1, concurrency), let (path, hash, size) = pending.first {
                    // With loads under way, one that finds no room waits for them to settle.
                    guard running == 0 || budget.unclaimed > 0 else { return }
                    let wanted = claim(for: size)
                    let claimed = try budget.claim(upTo: wanted)
                    pending.removeFirst()
                    running += 1
                    group.addTask {
                        (path.string, try await tree.load(path, hash, layout, budget, wanted: wanted, claimed: claimed))
                    }
                }
            }
            try startWhileRoom()
            while let (path, result) = try await group.next() {
                loaded[path] = result
                running -= 1
                try startWhileRoom()
            }
            return loaded
        }
    }

    /// The bytes to claim for a child: its declared size when its entry has one (the digest
    /// then holds it to that), else as much as a manifest may have.
    private func claim(for size: Int64?) -> Int {
        guard let size, size >= 0, size < Int64(maxDocumentBytes) else { return maxDocumentBytes }
        return Int(size)
    }

    /// Loads one child manifest within the bytes `claimed` for it from the tree's budget (see
    /// `ManifestBudget/claim(upTo:)`; claimed here when not given), and settles the claim at
    /// what it used.
    private func load(
        _ path: BundlePath,
        _ hash: ContentHash?,
        _ layout: ContentLayout,
        _ budget: ManifestBudget,
        wanted: Int,
        claimed: Int? = nil
    ) async throws -> (data: Data, fetched: Bool) {
        let claimed = try claimed ?? budget.claim(upTo: wanted)
        do {
            let loaded = try await loadChild(path, hash, layout, claimed)
            budget.settle(claimed: claimed, used: loaded.data.count)
            return loaded
        } catch let error as FreshAirError where claimed < wanted && error.isBodyTooLarge {
            budget.settle(claimed: claimed, used: 0)
            throw budget.tooLarge  // larger than what the tree had left, not than a document may be
        } catch {
            budget.settle(claimed: claimed, used: 0)
            throw error
        }
    }

    /// `a` and `a/b` cannot both be files.
    private func checkNoFileIsAlsoAFolder(_ selection: Selection) throws {
        let (files, live, sameAsLive) = (selection.files, livePaths, selection.sameAsLive)
        func bytes(_ index: Int) -> ArraySlice<UInt8> {
            index < files.count ? files.pathBytes(at: index) : live.pathBytes(at: Int(sameAsLive[index - files.count]))
        }
        // Sorted with `/` below every other byte, a file that is also a folder comes just before
        // the first path inside it: one pass over neighbours finds whether any is, without a set
        // of every path (4 MB at 100,000) or a string for every folder of every path. Names that
        // differ only by normalization were refused while selecting, so bytes compare names.
        // The pair reported is the first in that order, so it does not depend on which list (the
        // files to fetch, or those the live version has exactly) holds either path.
        let count = files.count + sameAsLive.count
        guard let (folder, inside) = Self.firstFileThatIsAFolder(count: count, path: bytes) else { return }
        func path(_ index: Int) -> BundlePath { BundlePath(trusted: String(decoding: bytes(index), as: UTF8.self)) }
        throw FreshAirError.manifest(
            ManifestError(
                source: url(for: BundlePath(trusted: "manifest.json")).absoluteString,
                problem: .pathConflict(path(folder), path(inside))
            )
        )
    }
}

extension ManifestTree {
    /// The first of `count` paths (each one once), in ``folderOrder(_:_:)``, that is a folder of
    /// another, with the first path inside it; `nil` when none is.
    static func firstFileThatIsAFolder<Bytes: Collection<UInt8>>(
        count: Int,
        path: (Int) -> Bytes
    ) -> (folder: Int, inside: Int)? {
        var order = (0..<count).map { Int32($0) }
        order.sort { folderOrder(path(Int($0)), path(Int($1))) }
        return zip(order, order.dropFirst()).first { earlier, later in
            isInside(path(Int(later)), folder: path(Int(earlier)))
        }.map { (Int($0), Int($1)) }
    }

    /// Byte order, but with `/` below every byte: a path comes just before the paths inside it.
    static func folderOrder(_ left: some Collection<UInt8>, _ right: some Collection<UInt8>) -> Bool {
        func rank(_ byte: UInt8) -> UInt8 { byte == UInt8(ascii: "/") ? 0 : byte }
        var left = left.makeIterator()
        var right = right.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return false
            case (nil, _): return true
            case (_, nil): return false
            case let (a?, b?) where a != b: return rank(a) < rank(b)
            default: continue
            }
        }
    }

    /// Whether `path` is inside `folder` (any depth).
    static func isInside(_ path: some Collection<UInt8>, folder: some Collection<UInt8>) -> Bool {
        path.count > folder.count && path.starts(with: folder)
            && path[path.index(path.startIndex, offsetBy: folder.count)] == UInt8(ascii: "/")
    }
}

/// The bytes and entries a manifest tree may still take, shared by the tasks that load its
/// children: a load claims what it may receive before it starts, so loads at once never hold
/// more than the limit between them.
final class ManifestBudget: Sendable {
    private struct State {
        var spent = 0
        var claimed = 0
        var entries = 0
    }

    private let state = Mutex(State())
    let limit: Int
    let entryLimit: Int
    let source: String

    init(limit: Int, entryLimit: Int = .max, source: String) {
        self.limit = limit
        self.entryLimit = entryLimit
        self.source = source
    }

    var tooLarge: FreshAirError {
        FreshAirError.manifest(ManifestError(source: source, problem: .treeTooLarge(limit: limit)))
    }

    /// Bytes neither spent nor claimed by a load under way.
    var unclaimed: Int { state.withLock { max(0, limit - $0.spent - $0.claimed) } }

    /// Spends bytes already held (the root).
    func spend(_ bytes: Int) throws {
        let total = state.withLock { state in
            state.spent += bytes
            return state.spent
        }
        guard total <= limit else { throw tooLarge }
    }

    /// Claims up to `most` bytes for a load; throws when nothing is left.
    func claim(upTo most: Int) throws -> Int {
        let granted = state.withLock { state in
            let granted = min(most, max(0, limit - state.spent - state.claimed))
            state.claimed += granted
            return granted
        }
        guard granted > 0 || most <= 0 else { throw tooLarge }
        return granted
    }

    /// Ends a claim: what the load `used` is spent, the rest is free again.
    func settle(claimed: Int, used: Int) {
        state.withLock { state in
            state.claimed -= claimed
            state.spent += used
        }
    }

    /// Entries the tree may still list.
    var entriesLeft: Int { state.withLock { max(0, entryLimit - $0.entries) } }

    /// Counts a manifest's entries against the tree's cap.
    func count(entries: Int, in manifest: String) throws {
        let total = state.withLock { state in
            state.entries += entries
            return state.entries
        }
        guard total <= entryLimit else { throw tooManyEntries(in: manifest) }
    }

    /// The tree lists more entries than its cap; `manifest` is where the count passed it.
    func tooManyEntries(in manifest: String) -> FreshAirError {
        FreshAirError.manifest(ManifestError(source: manifest, problem: .tooManyEntries(limit: entryLimit)))
    }
}
