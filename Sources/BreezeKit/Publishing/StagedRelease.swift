import Foundation
package import FreshAir

/// Staged rollouts, channels and the publisher's rollback, written as root manifests that every
/// device already reads. They need the object layout, where every release's files stay side by
/// side in the store under their digests.
///
/// - A staged release gives the new release's files to the installs a ``Gate`` admits
///   (`rolloutBucket < 10`, `channel == 'beta'`) and the previous release's to everyone else.
///   A file that differs is listed twice: the new entry with the gate as its condition, the
///   old one with its negation, `!(…)`, which holds on a device that knows neither key, so an
///   app too old to set a channel keeps what it has. Files the two share are listed once. The
///   previous release's entries are recorded in the root (`"staged": {"previous": […]}`), so
///   that widening the rollout, promoting it or stopping it always starts from the same base.
/// - Promoting is an ordinary release of the same folder. Stopping is a rollback: the base again.
/// - A rollback publishes an earlier root again (from the store's publish history) under a
///   sequence above the current one: devices that pin keys take it, since anti-rollback compares
///   sequences, and only the new root is uploaded, its files being in the store already.
package enum StagedRelease {
    /// The root manifest's member that records a staged release.
    package static let member = "staged"

    /// Who gets a staged release.
    package struct Gate: Equatable, Sendable, Codable {
        /// Installs whose rollout bucket (0–99, stable per install and bundle) is below this.
        package let percent: Int?
        /// Installs whose app sets `environment["channel"]` to this.
        package let channel: String?

        /// - Throws: ``PublishError`` for a percentage outside 1–99 (100 is an ordinary
        ///   release) or a channel name that is not letters, digits, `.`, `_` and `-`.
        package init(percent: Int?, channel: String?) throws(PublishError) {
            if let percent, !(1...99).contains(percent) {
                throw PublishError(
                    percent == 100
                        ? "--rollout 100 is everyone: release without --rollout to promote the release"
                        : "--rollout takes a percentage from 1 to 99, not \(percent)",
                    kind: .configuration
                )
            }
            if let channel {
                let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "._-"))
                guard !channel.isEmpty, channel.unicodeScalars.allSatisfy(allowed.contains) else {
                    throw PublishError(
                        "--channel \"\(channel)\": a channel name is letters, digits, '.', '_' and '-'",
                        kind: .configuration
                    )
                }
            }
            guard percent != nil || channel != nil else {
                throw PublishError("a staged release needs --rollout or --channel", kind: .configuration)
            }
            (self.percent, self.channel) = (percent, channel)
        }

        /// The condition that admits an install, as devices evaluate it.
        package var condition: String {
            [percent.map { "rolloutBucket < \($0)" }, channel.map { "channel == '\($0)'" }]
                .compactMap { $0 }.joined(separator: " && ")
        }

        /// In words: "10% of installs on the channel beta".
        package var description: String {
            let who = percent.map { "\($0)% of installs" } ?? "installs"
            return who + (channel.map { " on the channel \($0)" } ?? "")
        }
    }

    /// The files of a root manifest that gives `next`'s entries to the installs `gate` admits
    /// and `previous`'s to the rest: a path whose entries are the same in both is listed once,
    /// any other path's entries are listed with the gate and its negation. Paths in `next`'s
    /// order, then those only `previous` has.
    package static func entries(previous: [JSONValue], next: [JSONValue], gate: Gate) -> [JSONValue] {
        func byPath(_ entries: [JSONValue]) -> (order: [String], groups: [String: [JSONValue]]) {
            var order: [String] = []
            var groups: [String: [JSONValue]] = [:]
            for entry in entries {
                let path = entry["filename"]?.string ?? ""
                if groups[path] == nil { order.append(path) }
                groups[path, default: []].append(entry)
            }
            return (order, groups)
        }
        let (nextOrder, nextGroups) = byPath(next)
        let (previousOrder, previousGroups) = byPath(previous)
        let same = { (a: [JSONValue], b: [JSONValue]) in
            a.map { $0.serializedBytes(indent: 0) } == b.map { $0.serializedBytes(indent: 0) }
        }
        var result: [JSONValue] = []
        for path in nextOrder + previousOrder.filter({ nextGroups[$0] == nil }) {
            let new = nextGroups[path] ?? []
            let old = previousGroups[path] ?? []
            if same(new, old) {
                result += new
                continue
            }
            result += new.map { gated($0, by: gate.condition) }
            result += old.map { gated($0, by: "!(\(gate.condition))") }
        }
        return result
    }

    /// `entry` selected only where `condition` also holds: joined to its own `condition`
    /// string, which devices AND with any `conditions` array the entry has.
    static func gated(_ entry: JSONValue, by condition: String) -> JSONValue {
        var entry = entry
        let own = entry["condition"]?.string?.trimmingCharacters(in: .whitespaces) ?? ""
        entry.set("condition", .string(own.isEmpty ? condition : "(\(own)) && \(condition)"), after: "filename")
        return entry
    }

    /// The gate of the staged release `root` records, or `nil` when it records none.
    package static func gate(of root: JSONValue) -> Gate? {
        guard let record = root[member] else { return nil }
        return try? Gate(percent: record["percent"]?.integer.map(Int.init), channel: record["channel"]?.string)
    }

    /// Refuses a staged release with `gate` over `current` when `current` is a staged release
    /// for another audience: the new one would end the running one without a word, and its
    /// installs would go back to the previous release. The same channel (or none, both) is the
    /// rollout edited in place: widened, narrowed, or given new content. `allowed`:
    /// `--replace-rollout` was given.
    package static func refuseReplacing(_ current: JSONValue, with gate: Gate, allowed: Bool) throws(PublishError) {
        guard !allowed, let running = self.gate(of: current), running.channel != gate.channel else { return }
        throw PublishError(
            "a staged release is running there for \(running.description); this one, for \(gate.description), "
                + "would replace it, and its installs would go back to the release before it. Promote or stop the "
                + "running one first (release without --rollout and --channel, or revert), or give --replace-rollout",
            kind: .configuration
        )
    }

    /// The entries of the release everything is measured from: a staged root's previous
    /// release, else the root's own files (a legacy array is its files).
    package static func base(of root: JSONValue) -> [JSONValue] {
        if let previous = root[member]?["previous"]?.array { return previous }
        return root.array ?? root["files"]?.array ?? []
    }

    /// The root of a staged release: `next` (the new release's root as it will be published)
    /// with its files merged with `current`'s base, and the staged record; unsigned.
    package static func stagedRoot(next: JSONValue, current: JSONValue, gate: Gate) -> JSONValue {
        var root = next
        let previous = base(of: current)
        root.set("files", .array(entries(previous: previous, next: next["files"]?.array ?? [], gate: gate)))
        var record: [(key: String, value: JSONValue)] = []
        if let percent = gate.percent { record.append(("percent", JSONValue(percent))) }
        if let channel = gate.channel { record.append(("channel", .string(channel))) }
        record.append(("previous", .array(previous)))
        root.set(member, .object(record))
        root.remove(ManifestSignature.member)
        return root
    }

    /// A root manifest as it is published: its bytes, and the manifest devices read from them.
    struct Released {
        var data: Data
        var manifest: Manifest
        /// The signing this release did; `nil` when unsigned.
        var signed: SigningReport?
    }

    /// `root` as the release after `currentSequence`: signed with `keys` (or, unsigned, its
    /// sequence moved on when it has one), then checked as a device pinning the keys checks it.
    static func release(
        _ root: JSONValue,
        after currentSequence: Int?,
        keys: [SigningKey],
        validity: Duration,
        identity: String
    ) throws -> Released {
        var root = root
        let existing = try Manifest(data: Data(root.serializedBytes(indent: 2)), source: "manifest.json").release
        // After what devices have now; the document's own number is a scratch copy's.
        let sequence = try ReleaseSequence.after(
            currentSequence ?? existing.sequence,
            in: currentSequence == nil ? "manifest.json" : "the published manifest.json",
            kind: currentSequence == nil ? .source : .server
        )
        var signed: SigningReport?
        if keys.isEmpty {
            if root["sequence"] != nil { root.set("sequence", JSONValue(sequence)) }
        } else {
            // Signed anew; the number to be above is the destination's, given in `sequence`.
            var unsigned = existing
            (unsigned.signatures, unsigned.signedMessage, unsigned.sequence) = ([], nil, nil)
            signed = try ReleaseSigning.sign(
                &root,
                existing: unsigned,
                with: keys,
                options: SigningOptions(
                    validity: validity,
                    identity: existing.identity ?? identity,
                    sequence: sequence
                ),
                defaultIdentity: identity
            )
        }
        var bytes = root.serializedBytes(indent: 2)
        bytes.append(UInt8(ascii: "\n"))
        let manifest = try Manifest(data: Data(bytes), source: "manifest.json")
        if !keys.isEmpty {
            do {
                try manifest.verify(KeySet(keys: keys.map(\.publicKey)), source: "manifest.json")
            } catch {
                throw PublishError("a device pinning the key would refuse this release: \(error.detail)")
            }
        }
        return Released(data: Data(bytes), manifest: manifest, signed: signed)
    }

    /// Checks that `manifest`, read from the store at `source`, is signed by `keys` before any
    /// of its entries are signed again. Whoever can write to the bucket can write a root or a
    /// history object; without this, breeze would put the publisher's signature on what they
    /// wrote. Expiry does not matter here (the entries get a new signature and expiry), only
    /// who signed them. Unsigned releases (no keys) sign nothing, so there is nothing to check.
    ///
    /// - Throws: ``PublishError`` naming `source`, why it fails, and `advice`.
    static func requireSigned(
        _ manifest: Manifest,
        by keys: [SigningKey],
        source: String,
        otherwise advice: String
    ) throws(PublishError) {
        guard !keys.isEmpty else { return }
        do {
            try manifest.verify(KeySet(keys: keys.map(\.publicKey)), source: source)
        } catch {
            let why =
                switch error.problem {
                case .unsigned: "it has no signature"
                case .untrustedSigner(let signers): "it is signed by another key, \(signers.joined(separator: ", "))"
                case .signatureInvalid: "its content changed after it was signed"
                case .belowThreshold(let valid, let required): "\(valid) of the \(required) keys needed signed it"
                default: error.detail
                }
            throw PublishError(
                "\(source) is not signed by the given key (\(why)), so breeze will not sign its entries again: "
                    + "someone without the key changed it in the store, or a key since replaced signed it. \(advice)",
                kind: .server
            )
        }
    }

    /// The root manifest `live` read at `destination`, parsed, or `nil` when there is none.
    static func currentRoot(
        in live: LiveRoot?,
        at destination: any PublishDestination
    ) throws -> (json: JSONValue, manifest: Manifest)? {
        guard let data = live?.data else { return nil }
        do {
            return (try JSONReader.parse(data), try Manifest(data: data, source: "\(destination)/manifest.json"))
        } catch {
            throw PublishError(
                "\(destination)/manifest.json is not a manifest breeze can read: \(error)",
                kind: .server
            )
        }
    }
}
