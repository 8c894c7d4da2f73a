package import Foundation
import FreshAir

/// `breeze rollback`: an earlier release published again, under a new sequence.
///
/// Devices that pin keys refuse a root whose sequence is not above the one they installed, so
/// putting the old root back would be refused; the old root's files, child manifests and layout
/// are signed again as the next release instead. In the object layout every file is still in
/// the store, so only the new root goes up. A staged release is stopped the same way: its
/// previous release again, to everyone.
package enum PublisherRollback {
    /// What a rollback did, or in a dry run would do.
    package struct Report: Sendable, Codable {
        /// The sequence of the release whose content is published again (`nil`: unsigned, no sequence).
        package var restoredSequence: Int?
        /// Whether it stopped a staged release (its previous release to everyone).
        package var stoppedStagedRelease = false
        /// The new release, as devices see it.
        package var sequence: Int?
        package var expires: Date?
        package var signed: SigningReport?
        package var bytesUploaded: Int64 = 0
        package var dryRun = false
    }

    /// Publishes again the release before the current one at `destination`, or the one whose
    /// sequence is `sequence`.
    ///
    /// - Throws: ``PublishError`` when nothing is published, the destination uses the path
    ///   layout (the earlier files were overwritten there: release that version's folder again),
    ///   no earlier release is in the history, an object it names is gone from the store, or the
    ///   current release is signed and no key was given.
    package static func run(
        at destination: any PublishDestination,
        to sequence: Int? = nil,
        keys: [SigningKey],
        validity: Duration = .seconds(30 * 86_400),
        dryRun: Bool = false
    ) async throws -> Report {
        let live = try await LiveRoot.read("manifest.json", at: destination)
        guard let current = try StagedRelease.currentRoot(in: live, at: destination) else {
            throw PublishError("nothing is published at \(destination): there is no release to roll back from")
        }
        guard case .objects(let location) = current.manifest.layout else {
            throw PublishError(
                "\(destination) uses the path layout, where each release overwrote the files of the one before: "
                    + "release the earlier version's folder again (`breeze release FOLDER \(destination)`); "
                    + "with --layout objects every release stays in the store and can be rolled back",
                kind: .configuration
            )
        }
        if !current.manifest.signatures.isEmpty, keys.isEmpty {
            throw PublishError(
                "the current release is signed and devices pin its key: give --key to sign the rollback",
                kind: .configuration
            )
        }
        let (store, here, stored) = try await ObjectLayout.listing(of: destination, objectsAt: location)
        var report = Report(dryRun: dryRun)
        var root: JSONValue
        if current.json[StagedRelease.member] != nil, sequence == nil {
            // Stopping a staged release: its previous files to everyone, once the publisher's.
            try StagedRelease.requireSigned(
                current.manifest,
                by: keys,
                source: "the published manifest.json",
                otherwise:
                    "Release the folder you want devices to have again instead (`breeze release FOLDER \(destination)`)."
            )
            root = current.json
            root.set("files", .array(StagedRelease.base(of: current.json)))
            root.remove(StagedRelease.member)
            report.stoppedStagedRelease = true
            report.restoredSequence = nil
        } else {
            let earlier = try await earlierRoot(in: store, for: destination, current: current, sequence: sequence)
            try StagedRelease.requireSigned(
                earlier.manifest,
                by: keys,
                source: "the earlier release \(earlier.source) in the object store",
                otherwise: "Release that version's folder again instead (`breeze release FOLDER \(destination)`)."
            )
            root = earlier.json
            report.restoredSequence = earlier.manifest.sequence
        }
        try await requireObjects(of: root, in: store, listed: stored)
        let released = try StagedRelease.release(
            root,
            after: current.manifest.sequence,
            keys: keys,
            validity: validity,
            identity: current.manifest.identity ?? "manifest"
        )
        report.signed = released.signed
        (report.sequence, report.expires) = (released.manifest.sequence, released.manifest.expires)
        report.bytesUploaded = Int64(released.data.count)
        if !dryRun {
            try await ObjectLayout.switchRoot(
                to: released.data,
                at: destination,
                store: store,
                stored: stored,
                live: live
            )
        }
        return report
    }

    /// The newest root in the publish history whose files differ from the current release's
    /// (or the one with `sequence`).
    private static func earlierRoot(
        in store: any PublishDestination,
        for destination: any PublishDestination,
        current: (json: JSONValue, manifest: Manifest),
        sequence: Int?
    ) async throws -> (json: JSONValue, manifest: Manifest, source: String) {
        let historyPath = PublishHistory.path(for: destination)
        guard let history = try await store.read(historyPath) else {
            throw PublishError("\(destination) has no publish history in its object store: nothing to roll back to")
        }
        let currentFiles = StagedRelease.base(of: current.json).map { $0.serializedBytes(indent: 0) }
        for hex in try PublishHistory.roots(in: history, source: historyPath) {
            guard let data = try await store.read(hex),
                let json = try? JSONReader.parse(data),
                let manifest = try? Manifest(data: data, source: hex)
            else { continue }
            if let sequence {
                if manifest.sequence == sequence { return (json, manifest, hex) }
                continue
            }
            if StagedRelease.base(of: json).map({ $0.serializedBytes(indent: 0) }) != currentFiles {
                return (json, manifest, hex)
            }
        }
        throw PublishError(
            sequence.map { "no release with sequence \($0) is in \(destination)'s publish history" }
                ?? "\(destination)'s publish history holds no release other than the current one"
        )
    }

    /// Every object `root` names, child manifests' entries included, is in the store.
    private static func requireObjects(
        of root: JSONValue,
        in store: any PublishDestination,
        listed: [String: PublishedObject]
    ) async throws {
        var pending: [(source: String, entries: [JSONValue])] = [("manifest.json", root["files"]?.array ?? [])]
        var checked: Set<String> = []
        while let (source, entries) = pending.popLast() {
            for entry in entries {
                guard let path = entry["filename"]?.string, let hex = entry["sha"]?.string ?? entry["SHA"]?.string,
                    checked.insert(hex).inserted
                else { continue }
                guard listed[hex] != nil else {
                    throw PublishError(
                        "\(path) (named in \(source)) is gone from the object store as \(hex) (collected with --gc?): "
                            + "release that version's folder again instead"
                    )
                }
                if path.hasSuffix(BundlePath.childManifestSuffix), let data = try await store.read(hex),
                    let child = try? JSONReader.parse(data)
                {
                    pending.append((path, child.array ?? child["files"]?.array ?? []))
                }
            }
        }
    }
}
