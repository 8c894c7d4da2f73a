import Foundation
import FreshAir

/// What a release keeps for the devices that pin keys: a document published signed stays
/// signed, by at least one key that signed it. A device pinning the published key refuses an
/// unsigned document, or one signed only by keys it does not know, and keeps what it has until
/// the app is updated: publishing either strands every such device.
enum SignerContinuity {
    /// The document whose signatures devices check, for what `source` publishes: its path at
    /// the destination and the local file. A bundle's root manifest, a package's `.sig`
    /// (whether or not there is one yet), a repository's `index.json`.
    static func document(of source: URL) -> (path: String, local: URL)? {
        switch ReleasePipeline.kind(of: source) {
        case "package":
            let path = source.lastPathComponent + PackageSignature.suffix
            return (path, URL(fileURLWithPath: source.path + PackageSignature.suffix))
        case "repository": return ("index.json", source.appendingPathComponent("index.json"))
        case "bundle":
            let root = source.appendingPathComponent("manifest.json")
            return FileManager.default.fileExists(atPath: root.path) ? ("manifest.json", root) : nil
        default: return nil
        }
    }

    /// The release fields of `data`, the signed document at `path` (see ``document(of:)``);
    /// `nil` when it does not read as one.
    static func release(of path: String, in data: Data) -> ReleaseFields? {
        if path == "manifest.json" { return (try? Manifest(data: data, source: path))?.release }
        if path == "index.json" { return (try? RepositoryIndex(data: data, source: path))?.release }
        return (try? PackageSignature(data: data, source: path))?.release
    }

    /// The keys that signed `data`, the signed document at `path`; `nil` when it does not read
    /// as one.
    static func signers(of path: String, in data: Data) -> [String]? {
        release(of: path, in: data).map { $0.signatures.map(\.key) }
    }

    /// The keys that signed what `source` would publish as it is now.
    static func localSigners(of source: URL) -> [String] {
        guard let (path, local) = document(of: source), let data = try? Data(contentsOf: local) else { return [] }
        return signers(of: path, in: data) ?? []
    }

    /// Refuses to publish `source`, to be signed by `signers` (by default those that signed it as
    /// it is), over a published document that none of them signed: unsigned over signed always;
    /// signed by other keys unless `switchingKeys` (the apps already trust the new key).
    static func check(
        _ source: URL,
        signedBy signers: [String]? = nil,
        at destination: any PublishDestination,
        switchingKeys: Bool
    ) async throws {
        let signers = signers ?? localSigners(of: source)
        guard let (path, _) = document(of: source),
            let published = try await destination.read(path),
            let before = Self.signers(of: path, in: published), !before.isEmpty
        else { return }
        let old = Set(before).sorted().joined(separator: ", ")
        guard !signers.isEmpty else {
            throw PublishError(
                "\(source.lastPathComponent) is unsigned, but the published \(path) is signed (by \(old)): devices that "
                    + "pin the key would refuse it. Run `breeze sign \(source.path) --key KEY`, then publish"
            )
        }
        guard Set(signers).isDisjoint(with: before), !switchingKeys else { return }
        let new = Set(signers).sorted().joined(separator: ", ")
        throw PublishError(
            "\(source.lastPathComponent) would be signed by \(new), but the published \(path) is signed by \(old): "
                + "devices that pin \(before.count == 1 ? "that key" : "those keys") would refuse it and keep what "
                + "they have. Sign with a published key as well (--key OLD --key NEW), or, once the apps trust the new "
                + "key (an app update, or a key document they follow), pass --switch-keys"
        )
    }
}
