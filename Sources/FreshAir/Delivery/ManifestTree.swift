import Foundation

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
    /// `fetched` tells whether they crossed the network.
    let loadChild: (BundlePath, ContentHash?) async throws -> (data: Data, fetched: Bool)

    /// Every selected file, manifests included, root first; the first entry for a path wins.
    func select(root data: Data, fetched: Bool) async throws -> [SelectedFile] {
        let rootPath = BundlePath(trusted: "manifest.json")
        var selected = [SelectedFile(path: rootPath, hash: nil, size: Int64(data.count), contents: data, fetched: fetched)]
        var seen: Set<String> = [rootPath.string]
        try await walk(data, folder: nil, source: url(for: rootPath).absoluteString, depth: 0, into: &selected, seen: &seen)
        try checkNoFileIsAlsoAFolder(selected)
        return selected
    }

    private func walk(
        _ data: Data, folder: BundlePath?, source: String, depth: Int,
        into selected: inout [SelectedFile], seen: inout Set<String>
    ) async throws {
        guard depth <= maxDepth else {
            throw FreshAirError.manifest(ManifestError(source: source, problem: .tooDeep(limit: maxDepth)))
        }
        let manifest: Manifest
        do { manifest = try Manifest(data: data, source: source) } catch { throw FreshAirError.manifest(error) }
        for entry in manifest.entries where entry.condition.evaluate(in: environment) {
            let path = BundlePath.join(folder, entry.path)
            guard seen.insert(path.string).inserted else { continue }
            guard entry.isChildManifest else {
                selected.append(SelectedFile(path: path, hash: entry.hash, size: entry.size))
                continue
            }
            let (childData, fetched) = try await loadChild(path, entry.hash)
            selected.append(SelectedFile(path: path, hash: entry.hash, size: Int64(childData.count), contents: childData, fetched: fetched))
            try await walk(
                childData, folder: path.parent, source: url(for: path).absoluteString, depth: depth + 1,
                into: &selected, seen: &seen)
        }
    }

    func url(for path: BundlePath) -> URL { path.url(relativeTo: baseURL) }

    /// `a` and `a/b` cannot both be files.
    private func checkNoFileIsAlsoAFolder(_ selected: [SelectedFile]) throws {
        let files = Set(selected.map(\.path.string))
        for file in selected {
            var folder = file.path.parent
            while let current = folder {
                if files.contains(current.string) {
                    throw FreshAirError.manifest(ManifestError(
                        source: url(for: BundlePath(trusted: "manifest.json")).absoluteString,
                        problem: .pathConflict(current, file.path)))
                }
                folder = current.parent
            }
        }
    }
}
