package import Foundation
package import FreshAir

/// Adds a folder as the next version of a bundle in a repository folder (the layout
/// ``Repository`` reads: `<repo>/index.json` and `<repo>/<name>-<version>.tar.gz`), bumping
/// the version only when the content changed, and signs the index (`breeze repo add --key`,
/// `breeze sign REPO`).
package enum RepositoryPublisher {
    package struct Outcome: Sendable {
        package var name: String
        package var version: Int
        /// `false` when the folder matched the current version, so nothing was written.
        package var published: Bool
        package var archive: URL?
    }

    /// - Parameter keys: when given, the index is signed as a new release after the bundle is added.
    @discardableResult
    package static func add(
        folder: URL,
        as name: String,
        to repository: URL,
        signingWith keys: [SigningKey] = [],
        options: SigningOptions = SigningOptions()
    ) throws -> Outcome {
        guard (try? BundlePath(name))?.components.count == 1, !name.hasPrefix(".") else {
            throw PackagingError(
                "'\(name)' is not a plain bundle name: each bundle is a folder on devices, so its name is one path component, not starting with '.'",
                kind: .content
            )
        }
        let indexURL = repository.appendingPathComponent("index.json")
        var index = try readIndex(indexURL)
        try checkDevicesAccept(name, in: index, source: indexURL.path)
        let digest = try BundleFolder.digest(of: folder)
        if let current = index.bundles[name], current.digest == digest {
            return Outcome(name: name, version: current.version, published: false, archive: nil)
        }
        let version = (index.bundles[name]?.version ?? 0) + 1
        // The repository's folder is made by the writer, once the folder's names pass.
        let archive = repository.appendingPathComponent("\(name)-\(version).tar.gz")
        try PackageWriter.write(folder: folder, to: archive, topLevelFolder: "\(name)-\(version)")
        let (sha256, size) = try FileDigests.digest(of: archive, using: .sha256)
        index.bundles[name] = RepositoryIndex.Bundle(version: version, digest: digest, sha256: sha256.hex, size: size)
        // The index goes last: a client never sees a version whose archive is missing.
        var document = index.unsignedJSON
        if !keys.isEmpty {
            _ = try ReleaseSigning.sign(
                &document,
                existing: index.release,
                with: keys,
                options: options,
                defaultIdentity: repository.lastPathComponent
            )
        }
        try writeIndex(document, to: indexURL)
        return Outcome(name: name, version: version, published: true, archive: archive)
    }

    /// Signs `repository`'s `index.json` as a new release (or co-signs it), first making sure
    /// every bundle names its archive's SHA-256 and size, computed from the archives there.
    package static func sign(
        repository: URL,
        with keys: [SigningKey],
        options: SigningOptions = SigningOptions()
    ) throws -> SigningReport {
        let indexURL = repository.appendingPathComponent("index.json")
        guard FileManager.default.fileExists(atPath: indexURL.path) else {
            throw SigningError("\(repository.path) has no index.json")
        }
        var index = try readIndex(indexURL)
        var document: JSONValue
        if options.cosign {
            document = try JSONReader.parse(Data(contentsOf: indexURL))
        } else {
            for (name, bundle) in index.bundles {
                let archive = repository.appendingPathComponent("\(name)-\(bundle.version).tar.gz")
                guard FileManager.default.fileExists(atPath: archive.path) else {
                    throw SigningError(
                        "\(archive.lastPathComponent), which index.json names, is not in \(repository.path)"
                    )
                }
                let (sha256, size) = try FileDigests.digest(of: archive, using: .sha256)
                index.bundles[name]?.sha256 = sha256.hex
                index.bundles[name]?.size = size
            }
            document = index.unsignedJSON
        }
        var report = try ReleaseSigning.sign(
            &document,
            existing: index.release,
            with: keys,
            options: options,
            defaultIdentity: repository.lastPathComponent
        )
        try writeIndex(document, to: indexURL)
        report.file = indexURL.path
        return report
    }

    /// Whether `repository`'s `index.json` is signed as it is for the repository `id` by every
    /// key of `keys`, valid past `renewal`, and names each archive beside it by its digest and
    /// size: a release of it then keeps the index instead of making a new release of the same
    /// bundles.
    package static func isSignedAsIs(
        repository: URL,
        as id: String,
        by keys: [TrustedKey],
        now: Date,
        renewal: TimeInterval
    ) -> Bool {
        let indexURL = repository.appendingPathComponent("index.json")
        guard let data = try? Data(contentsOf: indexURL),
            let index = try? RepositoryIndex(data: data, source: indexURL.path),
            index.release.identity == id,
            index.release.isSignedAsIs(by: keys, now: now, renewal: renewal)
        else { return false }
        return index.bundles.allSatisfy { name, bundle in
            let archive = repository.appendingPathComponent("\(name)-\(bundle.version).tar.gz")
            guard let (sha256, size) = try? FileDigests.digest(of: archive, using: .sha256) else { return false }
            return bundle.sha256 == sha256.hex && bundle.size == size
        }
    }

    /// Refuses `name` when devices would refuse the index that lists it beside the bundles
    /// already there: read back by the device's own reader, before any archive is written. A
    /// name that differs from one already listed only by case (`Emoji` beside `emoji`) is one
    /// folder on an Apple device; its message names the bundle already there.
    static func checkDevicesAccept(_ name: String, in index: RepositoryIndex, source: String) throws {
        guard index.bundles[name] == nil else { return }
        var listed = index
        listed.bundles[name] = RepositoryIndex.Bundle(version: 1, digest: nil, sha256: nil, size: nil)
        do {
            _ = try RepositoryIndex(data: Data(listed.unsignedJSON.serializedBytes()), source: source)
        } catch {
            let folded = { (text: String) in text.decomposedStringWithCanonicalMapping.lowercased() }
            if let existing = index.bundles.keys.sorted().first(where: { folded($0) == folded(name) }) {
                throw PackagingError(
                    "'\(name)' and '\(existing)', already in \(source), would be one folder on Apple devices (their names differ only by case or accents), so every device would refuse the index. Pass --name \(existing) to add a new version of it, or choose another name.",
                    kind: .content
                )
            }
            throw PackagingError("devices would refuse the index with '\(name)' added: \(error)", kind: .content)
        }
    }

    private static func readIndex(_ url: URL) throws -> RepositoryIndex {
        guard let data = try? Data(contentsOf: url) else { return RepositoryIndex() }
        do { return try RepositoryIndex(data: data, source: url.path) } catch {
            throw PackagingError("\(error)", kind: .content)
        }
    }

    /// Writes the index, its time moved past the old one's second so the server's validators change.
    private static func writeIndex(_ document: JSONValue, to url: URL) throws {
        let previous = ServedFileTime.modified(url)
        try Data(document.serializedBytes(indent: 2) + [UInt8(ascii: "\n")]).write(to: url, options: .atomic)
        try ServedFileTime.moveForward(url, past: previous)
    }
}
