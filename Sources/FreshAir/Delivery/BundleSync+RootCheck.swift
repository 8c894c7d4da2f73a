import Foundation
import Synchronization

// The root check: what a `304` on the root manifest may skip, and what a version's record
// keeps so that the next check can.
extension BundleSync {
    /// Records what a later `304` needs to be answered without reading a manifest: what the
    /// selection was planned for, and the release's sequence and expiry.
    static func record(_ tree: ManifestTree.Selection, plannedFor fingerprint: String, in record: inout VersionRecord) {
        record.plannedFor = fingerprint
        record.sequence = tree.sequence
        record.expires = tree.expires
    }

    /// What a plan depends on besides the manifests: the environment and the keys the
    /// manifests were checked against.
    func planFingerprint(keys: KeySet?) -> String { Self.planFingerprint(environment: environment, keys: keys) }

    static func planFingerprint(environment: ConditionEnvironment, keys: KeySet?) -> String {
        guard let keys, !keys.keys.isEmpty else { return environment.fingerprint }
        var text = keys.keys.map(\.base64).sorted().joined(separator: ",")
        if keys.threshold > 1 { text += "/\(keys.threshold)" }
        return ContentHash.of(Array("\(environment.fingerprint) \(text)".utf8), using: .sha256).hex
    }

    /// The answer to a `304` when the live version was planned for this very environment (and
    /// checked against the same keys): the stored manifests would select the same files
    /// again, so there is nothing to plan, read or compare (a no-change check on 10,000 files
    /// costs one request, not a walk of the tree). `nil` when either changed, or the record
    /// predates fingerprints: re-plan.
    static func unchanged(
        _ live: VersionRecord,
        plannedFor fingerprint: String,
        source: String,
        clockSkew: Duration = .zero,
        now: Date
    ) throws -> SyncSummary? {
        guard live.plannedFor == fingerprint else { return nil }
        if let expires = live.expires {
            try FreshnessCheck.checkExpiryOrThrow(expires, source: source, clockSkew: clockSkew, now: now)
        }
        return .nothingInstalled(.alreadyCurrent, version: live.id, notModified: true, reused: live.fileCount)
    }
}

extension ConditionEnvironment {
    /// A digest of every key and value: equal environments have equal fingerprints. A sync
    /// keeps it with the version it installed, to know a `304` needs no re-planning.
    var fingerprint: String {
        var text = ""
        for key in values.keys.sorted() {
            ConditionValue.string(key).appendCanonical(to: &text)
            values[key]!.appendCanonical(to: &text)
        }
        return ContentHash.of(Array(text.utf8), using: .sha256).hex
    }
}
