package import Foundation
import FreshAir

/// `breeze validate REPOSITORY`: a repository folder (`index.json` and its archives) installed as
/// a device installs it, every bundle into a folder thrown away afterwards (see
/// ``DeviceInstallCheck``): an index that does not parse, an archive it names that is missing,
/// damaged or not the one it describes, or a signed index made for another repository id than
/// its folder's name is refused in a device's words.
///
/// Errors: those, and an index whose signatures name a key that is not one, or that expired.
/// Warnings: a signed index expiring within a week.
package enum RepositoryValidator {
    package typealias Problem = BundleValidator.Problem

    /// What a repository that installs holds, and the keys that vouch for it.
    package struct Contents: Sendable, Hashable {
        /// Each bundle's name and version.
        package var bundles: [String: Int]
        package var files: Int
        package var bytes: Int64
        /// The keys of its index, checked; empty when it is not signed.
        package var signers: [String]
    }

    /// The problems of the repository folder `repository`, read by devices as the repository
    /// `id` (by default the folder's name), and what it holds when a device would install it.
    package static func run(
        repository: URL,
        as id: String? = nil,
        now: Date = Date()
    ) async -> (problems: [Problem], contents: Contents?) {
        let repository = repository.standardizedFileURL
        let indexFile = "index.json"
        let index: RepositoryIndex
        do {
            let data = try Data(contentsOf: repository.appendingPathComponent(indexFile))
            index = try RepositoryIndex(data: data, source: indexFile)
        } catch let error as ManifestError {
            return ([Problem(severity: .error, file: indexFile, message: error.detail)], nil)
        } catch {
            return (
                [Problem(severity: .error, file: indexFile, message: "cannot be read (`breeze repo add` writes it)")],
                nil
            )
        }
        var (problems, keys) = ([Problem](), [TrustedKey]())
        if !index.release.signatures.isEmpty {
            (problems, keys) = DeviceInstallCheck.signers(
                of: index.release,
                file: indexFile,
                now: now,
                renewal: "sign the repository again (`breeze sign`)"
            )
        }
        var configuration = SyncConfiguration()
        configuration.trustedKeys = keys
        configuration.expectedIdentity = id
        var tally = (files: 0, bytes: Int64(0))
        let failure = await DeviceInstallCheck.problem(file: repository.lastPathComponent) { scratch in
            let directory = scratch.appendingPathComponent("bundles")
            try await Repository(
                source: repository.deletingLastPathComponent(),
                id: repository.lastPathComponent,
                directory: directory,
                configuration: configuration
            ).run()
            for name in index.bundles.keys {
                let (files, bytes) = DeviceInstallCheck.tally(directory.appendingPathComponent(name))
                tally = (tally.files + files, tally.bytes + bytes)
            }
        }
        if let failure { return (problems + [failure], nil) }
        let contents = Contents(
            bundles: index.bundles.mapValues(\.version),
            files: tally.files,
            bytes: tally.bytes,
            signers: keys.map(\.description)
        )
        return (problems, contents)
    }
}
