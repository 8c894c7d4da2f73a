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
        /// Whether it renewed the live release (the same content, a new expiry).
        package var renewed = false
        /// The new release, as devices see it.
        package var sequence: Int?
        package var expires: Date?
        package var signed: SigningReport?
        package var bytesUploaded: Int64 = 0
        package var dryRun = false
    }

    /// Publishes again the release before the current one at `destination`, or the one whose
    /// sequence is `sequence`. Reverts step back: after a revert, the next one goes to the
    /// release before the one it restored, not to the release it undid.
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
        let current = try currentRoot(in: live, at: destination, keys: keys, doing: "roll back from")
        guard case .objects(let location) = current.manifest.layout else {
            throw PublishError(
                "\(destination) uses the path layout, where each release overwrote the files of the one before: "
                    + "release the earlier version's folder again (`breeze release FOLDER \(destination)`); "
                    + "with --layout objects every release stays in the store and can be rolled back",
                kind: .configuration
            )
        }
        let (store, _, stored) = try await ObjectLayout.listing(of: destination, objectsAt: location)
        var report = Report(dryRun: dryRun)
        var root: JSONValue
        var restores: String?
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
        } else {
            let history = try await PublishHistory.read(for: destination, in: store)
            let earlier = try await earlierRoot(
                in: store,
                history: history,
                for: destination,
                current: current,
                live: live,
                sequence: sequence
            )
            try StagedRelease.requireSigned(
                earlier.manifest,
                by: keys,
                source: "the earlier release \(earlier.source) in the object store",
                otherwise: "Release that version's folder again instead (`breeze release FOLDER \(destination)`)."
            )
            root = earlier.json
            report.restoredSequence = earlier.manifest.sequence
            restores = earlier.source
        }
        try await requireObjects(of: root, in: store, listed: stored)
        let written = Written(destination: destination, live: live, objects: (store, stored))
        try await publish(
            root,
            over: current,
            to: written,
            restores: restores,
            keys: keys,
            validity: validity,
            report: &report
        )
        return report
    }

    /// Signs the live release again, unchanged, with a new expiry at the next sequence (devices
    /// refuse a different document at the same one): what a scheduled job runs before the
    /// signature runs out. Either layout: only the root changes.
    ///
    /// - Throws: ``PublishError`` when nothing is published, no key is given, or the live root
    ///   is not signed by the key.
    package static func renew(
        at destination: any PublishDestination,
        keys: [SigningKey],
        validity: Duration = .seconds(30 * 86_400),
        dryRun: Bool = false
    ) async throws -> Report {
        let live = try await LiveRoot.read("manifest.json", at: destination)
        let current = try currentRoot(in: live, at: destination, keys: keys, doing: "renew")
        guard !keys.isEmpty else {
            throw PublishError("--renew signs the live release again: give --key", kind: .configuration)
        }
        try StagedRelease.requireSigned(
            current.manifest,
            by: keys,
            source: "the published manifest.json",
            otherwise:
                "Release the folder devices should have with the key instead (`breeze release FOLDER \(destination)`)."
        )
        var report = Report(dryRun: dryRun)
        report.restoredSequence = current.manifest.sequence
        report.renewed = true
        var written = Written(destination: destination, live: live, objects: nil)
        var restores: String?
        if case .objects(let location) = current.manifest.layout {
            // No listing: the renewed root is new bytes, uploaded whatever the store holds.
            let store = try destination.located(at: location)
            written.objects = (store, [:])
            // A renewed revert is still that revert: the next one steps back from where it did.
            let history = try await PublishHistory.read(for: destination, in: store)
            let liveHex = live.digest
            restores = history.first { $0.sha256 == liveHex }?.restores
        }
        try await publish(
            current.json,
            over: current,
            to: written,
            restores: restores,
            keys: keys,
            validity: validity,
            report: &report
        )
        return report
    }

    /// Where a rollback or renewal writes: the destination, the root it read there, and in
    /// the object layout the store and what it holds (`nil`: the path layout, root only).
    private struct Written {
        var destination: any PublishDestination
        var live: LiveRoot
        var objects: (store: any PublishDestination, stored: [String: PublishedObject])?
    }

    /// Signs `root` as the release after `current` and, unless a dry run, makes it the root.
    private static func publish(
        _ root: JSONValue,
        over current: (json: JSONValue, manifest: Manifest),
        to written: Written,
        restores: String?,
        keys: [SigningKey],
        validity: Duration,
        report: inout Report
    ) async throws {
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
        guard !report.dryRun else { return }
        if let (store, stored) = written.objects {
            try await ObjectLayout.switchRoot(
                to: released.data,
                at: written.destination,
                store: store,
                stored: stored,
                live: written.live,
                restores: restores
            )
        } else {
            _ = try await written.live.replace(with: released.data, at: written.destination)
        }
    }

    /// The live root, parsed; refused when there is none, or when it is signed and no key
    /// was given to sign what replaces it.
    private static func currentRoot(
        in live: LiveRoot,
        at destination: any PublishDestination,
        keys: [SigningKey],
        doing action: String
    ) throws -> (json: JSONValue, manifest: Manifest) {
        guard let current = try StagedRelease.currentRoot(in: live, at: destination) else {
            throw PublishError("nothing is published at \(destination): there is no release to \(action)")
        }
        if !current.manifest.signatures.isEmpty, keys.isEmpty {
            throw PublishError(
                "the current release is signed and devices pin its key: give --key to sign what replaces it",
                kind: .configuration
            )
        }
        return current
    }

    /// The root a revert publishes again: with `sequence`, the newest in the history with that
    /// sequence; otherwise the first, going back from the live release (or from the release
    /// it restored, when it is a revert), whose files differ from the live ones.
    private static func earlierRoot(
        in store: any PublishDestination,
        history: [PublishHistory.Entry],
        for destination: any PublishDestination,
        current: (json: JSONValue, manifest: Manifest),
        live: LiveRoot,
        sequence: Int?
    ) async throws -> (json: JSONValue, manifest: Manifest, source: String) {
        guard !history.isEmpty else {
            throw PublishError("\(destination) has no publish history in its object store: nothing to roll back to")
        }
        let liveHex = live.digest
        let liveIndex = history.firstIndex { $0.sha256 == liveHex }
        let restoredIndex = liveIndex.flatMap { history[$0].restores }.flatMap { hex in
            history.firstIndex { $0.sha256 == hex }
        }
        let from = sequence == nil ? (restoredIndex ?? liveIndex).map { $0 + 1 } ?? 0 : 0
        let currentFiles = StagedRelease.base(of: current.json).map { $0.serializedBytes(indent: 0) }
        for entry in history[from...] {
            guard let data = try await store.read(entry.sha256),
                let json = try? JSONReader.parse(data),
                let manifest = try? Manifest(data: data, source: entry.sha256)
            else { continue }
            if let sequence {
                if manifest.sequence == sequence { return (json, manifest, entry.sha256) }
                continue
            }
            if StagedRelease.base(of: json).map({ $0.serializedBytes(indent: 0) }) != currentFiles {
                return (json, manifest, entry.sha256)
            }
        }
        let restored = restoredIndex.map { _ in " (it restored an earlier release, and reverts step back from there)" }
        throw PublishError(
            sequence.map { "no release with sequence \($0) is in \(destination)'s publish history" }
                ?? "\(destination)'s publish history holds no release with other content before the live one"
                + (restored ?? "")
                + ": `breeze history` lists the releases, and --to SEQUENCE publishes any of them again"
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
