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
    let loadChild: @Sendable (BundlePath, ContentHash?, ContentLayout) async throws -> (data: Data, fetched: Bool)
    /// How many child manifests of one manifest are loaded at once.
    var concurrency = 8
    /// When set, the root must be signed by these keys (to their threshold) and every entry,
    /// in every manifest, must have a digest: the signature then covers the whole tree.
    var keys: KeySet?
    /// The most bytes all manifests of the tree may add up to: a server cannot make a device
    /// hold many large child manifests at once.
    var maxTotalBytes = Int.max
    /// Checks the root manifest once its signature is verified, before any child is loaded:
    /// a stale or substituted root costs no further request.
    var acceptRoot: (@Sendable (Manifest) throws -> Void)?

    /// What a walk found: the selected files and the root manifest's own fields.
    struct Selection {
        /// Every selected file, manifests included, root first; the first entry for a path wins.
        var files: [SelectedFile] = []
        /// The root manifest's publisher sequence and expiry (object form).
        var sequence: Int?
        var expires: Date?
        /// What the root manifest says it is (`identity`), checked against what the app expects.
        var identity: String?
        /// Where the root manifest says the files are.
        var layout = ContentLayout.paths
    }

    func select(root data: Data, fetched: Bool) async throws -> Selection {
        let rootPath = BundlePath(trusted: "manifest.json")
        var selection = Selection(files: [
            SelectedFile(path: rootPath, hash: nil, size: Int64(data.count), contents: data, fetched: fetched)
        ])
        var seen = PathCollisions()
        try seen.insert(rootPath)
        let budget = ManifestBudget(limit: maxTotalBytes, source: url(for: rootPath).absoluteString)
        try budget.spend(data.count)
        try await walk(
            data,
            folder: nil,
            source: url(for: rootPath).absoluteString,
            depth: 0,
            layout: .paths,
            into: &selection,
            seen: &seen,
            budget: budget
        )
        try checkNoFileIsAlsoAFolder(selection.files)
        return selection
    }

    private func walk(
        _ data: Data,
        folder: BundlePath?,
        source: String,
        depth: Int,
        layout rootLayout: ContentLayout,
        into selection: inout Selection,
        seen: inout PathCollisions,
        budget: ManifestBudget
    ) async throws {
        guard depth <= maxDepth else {
            throw FreshAirError.manifest(ManifestError(source: source, problem: .tooDeep(limit: maxDepth)))
        }
        let manifest: Manifest
        do {
            manifest = try Manifest(data: data, source: source)
            if let keys {
                if depth == 0 {
                    try manifest.verify(keys, source: source)
                } else {
                    try manifest.requireDigests(source: source)
                }
            }
        } catch { throw FreshAirError.manifest(error) }
        if depth == 0 {
            try acceptRoot?(manifest)
            (selection.sequence, selection.expires, selection.identity, selection.layout) = (
                manifest.sequence, manifest.expires, manifest.identity, manifest.layout
            )
        }
        let layout = depth == 0 ? manifest.layout : rootLayout
        let applicable = manifest.entries.filter { $0.condition.evaluate(in: environment) }
        if case .objects = layout {
            do { try manifest.requireObjectDigests(applicable, source: source) } catch {
                throw FreshAirError.manifest(error)
            }
        }
        // An entry this device selects must be whole; a broken one it skips is another device's.
        if let index = manifest.entries.firstIndex(where: { $0.defect != nil && $0.condition.evaluate(in: environment) }
        ) {
            let entry = manifest.entries[index]
            throw FreshAirError.manifest(
                ManifestError(source: source, problem: .entry(index: index, filename: entry.path.string, entry.defect!))
            )
        }
        // This manifest's children are loaded together; the walk below still takes them in
        // document order, so the result is the same as loading them one by one.
        let children = try await loadAll(
            budget: budget,
            layout: layout,
            applicable.filter(\.isChildManifest).map { (BundlePath.join(folder, $0.path), $0.hash) }
                .filter { !seen.contains($0.0) }
        )
        for entry in applicable {
            let path = BundlePath.join(folder, entry.path)
            // The first entry for a path wins; two spellings of one name on a device are refused.
            do { guard try seen.insert(path) else { continue } } catch {
                throw FreshAirError.manifest(ManifestError(source: source, problem: .unsafePath(error)))
            }
            guard entry.isChildManifest else {
                selection.files.append(SelectedFile(path: path, hash: entry.hash, size: entry.size))
                continue
            }
            let (childData, fetched) =
                if let loaded = children[path.string] {
                    loaded
                } else {
                    try await load(path, entry.hash, layout, budget)
                }
            selection.files.append(
                SelectedFile(
                    path: path,
                    hash: entry.hash,
                    size: Int64(childData.count),
                    contents: childData,
                    fetched: fetched
                )
            )
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

    func url(for path: BundlePath) -> URL { path.url(relativeTo: baseURL) }

    /// Loads child manifests, up to ``concurrency`` at a time; the first failure ends it.
    private func loadAll(
        budget: ManifestBudget,
        layout: ContentLayout,
        _ children: [(BundlePath, ContentHash?)]
    ) async throws -> [String: (data: Data, fetched: Bool)] {
        guard children.count > 1 else { return [:] }  // one child: the walk loads it itself
        let tree = self
        return try await withThrowingTaskGroup(of: (String, (data: Data, fetched: Bool)).self) { group in
            var pending = children[...]
            var loaded: [String: (data: Data, fetched: Bool)] = [:]
            func startNext() {
                guard let (path, hash) = pending.popFirst() else { return }
                group.addTask { (path.string, try await tree.load(path, hash, layout, budget)) }
            }
            for _ in 0..<max(1, concurrency) { startNext() }
            while let (path, result) = try await group.next() {
                loaded[path] = result
                startNext()
            }
            return loaded
        }
    }

    /// Loads one child manifest and counts it against the tree's budget.
    private func load(
        _ path: BundlePath,
        _ hash: ContentHash?,
        _ layout: ContentLayout,
        _ budget: ManifestBudget
    ) async throws -> (data: Data, fetched: Bool) {
        let loaded = try await loadChild(path, hash, layout)
        try budget.spend(loaded.data.count)
        return loaded
    }

    /// `a` and `a/b` cannot both be files.
    private func checkNoFileIsAlsoAFolder(_ selected: [SelectedFile]) throws {
        let files = Set(selected.map(\.path.string))
        for file in selected {
            var folder = file.path.parent
            while let current = folder {
                if files.contains(current.string) {
                    throw FreshAirError.manifest(
                        ManifestError(
                            source: url(for: BundlePath(trusted: "manifest.json")).absoluteString,
                            problem: .pathConflict(current, file.path)
                        )
                    )
                }
                folder = current.parent
            }
        }
    }
}

/// The bytes a manifest tree may still take, shared by the tasks that load its children.
final class ManifestBudget: Sendable {
    private let spent = Mutex(0)
    let limit: Int
    let source: String

    init(limit: Int, source: String) {
        self.limit = limit
        self.source = source
    }

    func spend(_ bytes: Int) throws {
        let total = spent.withLock { spent in
            spent += bytes
            return spent
        }
        guard total <= limit else {
            throw FreshAirError.manifest(ManifestError(source: source, problem: .treeTooLarge(limit: limit)))
        }
    }
}
