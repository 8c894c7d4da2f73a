package import Foundation
import FreshAir

/// `breeze validate PACKAGE`: the package installed as a device installs it, into a store
/// thrown away afterwards, so that what a device would refuse is refused here, in the same
/// words: the same archive reader and limits, the same confined writes, and, when a `.sig` is
/// beside it, the same signature, digest and size checks under the keys that document names.
///
/// Errors: an archive a device would refuse, a `.sig` that does not parse, that names a key that
/// is not one, whose signatures do not verify or that names another package (it changed after
/// `breeze sign`), or that has expired; a `.meta` that is not `{"Last-Modified": "<HTTP date>"}`.
/// Warnings: a `.sig` expiring within a week.
package enum PackageValidator {
    package typealias Problem = BundleValidator.Problem

    /// What a package that installs holds, and the keys that vouch for it.
    package struct Contents: Sendable, Hashable {
        package var files: Int
        package var bytes: Int64
        /// The keys of its `.sig`, checked; empty when it has none.
        package var signers: [String]
    }

    /// The problems of `package`, and what it holds when a device would install it.
    package static func run(package: URL, now: Date = Date()) async -> (problems: [Problem], contents: Contents?) {
        let package = package.standardizedFileURL
        var (problems, keys) = signatureProblems(package, now: now)
        problems += metaProblems(package)
        var configuration = SyncConfiguration()
        configuration.trustedKeys = keys
        var tally = (files: 0, bytes: Int64(0))
        let failure = await DeviceInstallCheck.problem(file: package.lastPathComponent) { scratch in
            let updater = PackageUpdater(
                remote: package,
                store: BundleStore(root: scratch.appendingPathComponent("store")),
                transport: nil,
                configuration: configuration
            )
            try await updater.run()
            tally = updater.contentDirectory.map(DeviceInstallCheck.tally) ?? tally
        }
        if let failure { return (problems + [failure], nil) }
        return (problems, Contents(files: tally.files, bytes: tally.bytes, signers: keys.map(\.description)))
    }

    /// The `.sig` beside the package, when there is one: its problems, and the keys to install
    /// it under (see ``DeviceInstallCheck``).
    private static func signatureProblems(_ package: URL, now: Date) -> ([Problem], [TrustedKey]) {
        let name = package.lastPathComponent + PackageSignature.suffix
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: package.path + PackageSignature.suffix)) else {
            return ([], [])
        }
        let document: PackageSignature
        do { document = try PackageSignature(data: data, source: name) } catch {
            return ([Problem(severity: .error, file: name, message: error.detail)], [])
        }
        if document.release.signatures.isEmpty {
            return (
                [Problem(severity: .error, file: name, message: "no signatures: run `breeze sign` on the package")], []
            )
        }
        // A package changed after it was signed: said in a publisher's words, not a device's
        // (a device hears that the server's file is not the one described), and then installed
        // without the keys, so that the archive itself is still checked.
        if let (hash, size) = try? FileDigests.digest(of: package, using: .sha256),
            hash != document.sha256 || size != document.size
        {
            let message =
                "signed for other bytes (\(document.size) bytes, SHA-256 \(document.sha256.hex.prefix(12))…); the package is \(size) bytes, SHA-256 \(hash.hex.prefix(12))…: it changed after `breeze sign`, so devices that pin the key refuse it; sign it again"
            return ([Problem(severity: .error, file: name, message: message)], [])
        }
        return DeviceInstallCheck.signers(
            of: document.release,
            file: name,
            now: now,
            renewal: "sign the package again (`breeze sign`)"
        )
    }

    /// The `.meta` beside the package, when there is one: a bundled copy's date, which a device
    /// reads to prefer it over older content. One it cannot read gives no date at all.
    private static func metaProblems(_ package: URL) -> [Problem] {
        let name = package.lastPathComponent + ".meta"
        guard FileManager.default.fileExists(atPath: package.path + ".meta"),
            BundledPackageMeta(package: package) == nil
        else { return [] }
        return [
            Problem(
                severity: .error,
                file: name,
                message:
                    "not {\"Last-Modified\": \"<HTTP date>\"}: a device reads no date from it, and installs the bundled copy only when nothing is installed (`breeze package --meta` writes one)"
            )
        ]
    }
}
