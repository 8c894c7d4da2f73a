package import Foundation
package import FreshAir

/// The one document a destination's devices start from (a bundle's `manifest.json`, a
/// repository's `index.json`, a signed package's `.sig`), as a release found it when it began.
///
/// A release is a transaction on it. Everything else goes up first; then the root is replaced
/// only while it is still the one read here (``PublishDestination/swap(_:expecting:)``), so
/// of two releases that raced, one wins and the other writes no root. What replaces it must
/// come after it (``RootSuccession``), and must not silently empty what devices have
/// (``RemovalCheck``).
package struct LiveRoot: Sendable {
    /// Its path at the destination.
    package let path: String
    /// Its bytes and tag; `nil` when nothing is published there yet.
    package let object: TaggedObject?

    package init(path: String, object: TaggedObject?) {
        self.path = path
        self.object = object
    }

    package var data: Data? { object?.data }

    /// The SHA-256 of its bytes, hex: its object name in the object layout's store.
    package var digest: String? { data.map { ContentHash.of($0, using: .sha256).hex } }

    /// Its release fields (sequence, expiry, signatures); `nil` when absent or unreadable.
    package var release: ReleaseFields? { data.flatMap { SignerContinuity.release(of: path, in: $0) } }

    /// Reads the root at `path` of `destination`.
    package static func read(_ path: String, at destination: any PublishDestination) async throws -> LiveRoot {
        LiveRoot(path: path, object: try await destination.readTagged(path))
    }

    /// The root of what `source` publishes (see ``SignerContinuity/document(of:)``), read from
    /// `destination`; `nil` for an unsigned package, whose one file is its own root.
    package static func read(of source: URL, at destination: any PublishDestination) async throws -> LiveRoot? {
        switch ReleasePipeline.kind(of: source) {
        case "bundle": return try await read("manifest.json", at: destination)
        case "repository": return try await read("index.json", at: destination)
        case "package":
            guard let (path, local) = SignerContinuity.document(of: source),
                FileManager.default.fileExists(atPath: local.path)
            else { return nil }
            return try await read(path, at: destination)
        default: return nil
        }
    }

    /// Writes `file` in the root's place if nothing replaced the root since it was read.
    ///
    /// - Throws: ``PublishError`` of kind ``PublishError/Kind/conflict`` naming what is live
    ///   now when another release got there first.
    package func replace(with file: LocalFile, at destination: any PublishDestination) async throws -> Int64 {
        do {
            return try await destination.swap(file, expecting: object?.tag)
        } catch let error as PublishError where error.kind == .conflict {
            let now = try? await destination.readTagged(path)
            let sequence = now.flatMap { SignerContinuity.release(of: path, in: $0.data)?.sequence }
            throw PublishError(
                "another release reached \(destination)/\(path) while this one was under way"
                    + (sequence.map { " (sequence \($0) is live there now)" } ?? "")
                    + ": this one's \(path) was not written, and devices keep getting the other",
                kind: .conflict
            )
        }
    }

    /// Writes `data` in the root's place, as ``replace(with:at:)-(LocalFile,_)`` does.
    package func replace(with data: Data, at destination: any PublishDestination) async throws -> Int64 {
        try await LocalFile.holding(data, at: path) { try await replace(with: $0, at: destination) }
    }

    /// Refuses `next`, the root about to replace this one, when it would take devices back
    /// (``RootSuccession``) or remove more than `removals` allows (``RemovalCheck``).
    ///
    /// - Returns: the files `next` no longer lists, for the report.
    /// - Throws: ``PublishError`` saying what is live, what this is, and what to run instead.
    package func admit(
        _ next: Data,
        removals: RemovalCheck,
        at destination: any PublishDestination
    ) throws -> RemovalCheck.Removed {
        let (current, coming) = (data.map { RootDocument(path: path, data: $0) }, RootDocument(path: path, data: next))
        let again = "To publish this content again, release it with --key: it signs above what is live"
        switch RootSuccession(live: data, liveRelease: current?.release, next: next, nextRelease: coming.release) {
        case .first, .same, .newer: break
        case .older(let live, let this):
            throw PublishError(
                "this release's \(path) is sequence \(this), but sequence \(live) is live at \(destination): devices "
                    + "that installed it refuse an older release, and new installs would get older content. \(again)",
                remedy: .revert
            )
        case .sameSequence(let sequence):
            throw PublishError(
                "this release's \(path) is sequence \(sequence), as the one live at \(destination), but its content "
                    + "differs: devices that installed the live one refuse it. \(again)",
                remedy: .revert
            )
        }
        let removed = RemovalCheck.Removed(live: current?.listing ?? [:], next: coming.listing)
        if let problem = removals.problem(removed) { throw PublishError(problem) }
        return removed
    }
}

/// Whether a root may replace the live one: the pure rule behind "sequences only go up".
///
/// Devices that installed a release refuse one with a lower sequence, or the same sequence
/// with other bytes; new installs would take it, so one destination would serve two
/// releases. The same bytes again (a rerun after a kill, an unchanged release) are allowed:
/// nothing is written. Documents without a sequence (unsigned ones from before sequences)
/// are not compared.
package enum RootSuccession: Equatable, Sendable {
    /// Nothing is live.
    case first
    /// The same bytes as the live root.
    case same
    /// A higher sequence, or one of the two has none.
    case newer
    /// A lower sequence than the live one's.
    case older(live: Int, next: Int)
    /// The live sequence, with other bytes.
    case sameSequence(Int)

    package init(live: Data?, liveRelease: ReleaseFields?, next: Data, nextRelease: ReleaseFields?) {
        guard let live else {
            self = .first
            return
        }
        if live == next {
            self = .same
            return
        }
        guard let old = liveRelease?.sequence, let new = nextRelease?.sequence else {
            self = .newer
            return
        }
        self = new > old ? .newer : new == old ? .sameSequence(new) : .older(live: old, next: new)
    }
}
