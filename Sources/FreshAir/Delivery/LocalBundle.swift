package import Foundation

/// A bundle folder on disk, as an author has it before publishing.
package enum LocalBundle {
    /// The files a device with `environment` would download from this folder once published,
    /// manifests included, with their sizes on disk.
    package static func selection(
        folder: URL,
        environment: ConditionEnvironment,
        maxDepth: Int = 8
    ) async throws -> [SelectedEntry] {
        try await devicePlan(folder: folder, environment: environment, maxDepth: maxDepth).files
    }

    /// ``selection(folder:environment:maxDepth:)``, and how many entries the conditions leave
    /// to other devices (``SyncSummary/filesForOtherDevices``).
    package static func devicePlan(
        folder: URL,
        environment: ConditionEnvironment,
        maxDepth: Int = 8
    ) async throws -> (files: [SelectedEntry], otherDevices: Int) {
        let root = folder.standardizedFileURL
        let manifestPath = root.appendingPathComponent("manifest.json").path
        let data = try Disk.read(manifestPath)
        let tree = ManifestTree(baseURL: root, environment: environment, maxDepth: maxDepth) { path, hash, _, _ in
            let childData = try Disk.read(root.appendingPathComponent(path.string).path)
            if let hash {
                let actual = ContentHash.of(childData, using: hash.algorithm)
                guard actual == hash else {
                    throw FreshAirError.hashMismatch(
                        path: path.string,
                        url: root.appendingPathComponent(path.string),
                        expected: hash,
                        actual: actual
                    )
                }
            }
            return (childData, false)
        }
        let selection = try await tree.select(root: data, fetched: false)
        let files = selection.files.map { file in
            SelectedEntry(
                path: file.path.string,
                size: file.size ?? Disk.status(root.appendingPathComponent(file.path.string).path)?.size,
                hash: file.hash?.hex
            )
        }
        return (files, selection.otherDevices)
    }
}
