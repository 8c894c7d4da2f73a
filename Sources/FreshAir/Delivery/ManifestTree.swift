import Foundation

/// Walks a manifest and its child manifests, selecting what applies to one environment.
///
/// A child manifest is read from the live version when its parent lists the same digest
/// the live copy was verified to have, so an unchanged tree costs no requests beyond the
/// root; otherwise it is fetched and checked against that digest. Children live in their
/// own folder: `Embed1.freshair/manifest.json` lists `bar.md`, found at
/// `Embed1.freshair/bar.md`.
struct ManifestTree {
    let fetcher: Fetcher
    /// The bundle folder's URL, ending in `/`.
    let baseURL: URL
    let environment: ConditionEnvironment
    let live: VersionRecord?
    let liveDirectory: String?
    let maxManifestSize: Int
    let maxDepth: Int

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
            let (childData, fetched) = try await childManifest(at: path, hash: entry.hash)
            selected.append(SelectedFile(path: path, hash: entry.hash, size: Int64(childData.count), contents: childData, fetched: fetched))
            try await walk(
                childData, folder: path.parent, source: url(for: path).absoluteString, depth: depth + 1,
                into: &selected, seen: &seen)
        }
    }

    /// The child's bytes: from the live version when its digest still matches, else fetched.
    private func childManifest(at path: BundlePath, hash: ContentHash?) async throws -> (Data, fetched: Bool) {
        if let hash, let record = live?.files[path.string], record.hash == hash, let liveDirectory,
           let data = FileManager.default.contents(atPath: liveDirectory + "/" + path.string),
           ContentHash.of(data, using: hash.algorithm) == hash {
            return (data, false)
        }
        let childURL = url(for: path)
        guard case .fetched(let data, _) = try await fetcher.document(at: childURL, validators: nil, limit: maxManifestSize) else {
            throw FreshAirError.httpStatus(304, url: childURL)
        }
        if let hash {
            let actual = ContentHash.of(data, using: hash.algorithm)
            guard actual == hash else {
                throw FreshAirError.hashMismatch(path: path.string, url: childURL, expected: hash, actual: actual)
            }
        }
        return (data, true)
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
