import Foundation

/// How every delivery mode accepts its signed root document (a bundle's root manifest, a
/// package's `.sig`, a repository's `index.json`): ``FreshnessCheck`` against the store's
/// high-water mark for the identity it is signed for, then, once everything the document names has passed its
/// own checks, the mark raised to the document's sequence.
///
/// The check and the raise are apart because a bundle's root is accepted only after its whole
/// tree of child manifests verifies: a mark raised first would let a tree that fails refuse
/// the good release still live.
struct RootAcceptance: Sendable {
    /// Identity, sequence and expiry.
    let freshness: FreshnessCheck
    /// Where the store keeps its marks.
    let marks: HighWaterMarks
    /// Where the document comes from (the bundle, package or index URL): what marks were kept
    /// under before they followed the identity.
    let source: String

    /// - Parameters:
    ///   - document: the signed document's URL, named in errors.
    ///   - source: the bundle, package or index URL it belongs to.
    ///   - marks: the store's high-water marks.
    ///   - defaultIdentity: the identity expected when the app set none.
    init(
        document: URL,
        source: String,
        marks: HighWaterMarks,
        configuration: SyncConfiguration,
        defaultIdentity: String
    ) {
        freshness = FreshnessCheck(
            source: document.absoluteString,
            configuration: configuration,
            defaultIdentity: defaultIdentity
        )
        self.marks = marks
        self.source = source
    }

    /// What the mark is kept under: the identity the document must be signed for, not the URL
    /// it came from, so that the same signed content from a mirror, another host name, scheme
    /// or port never goes below what was accepted (TUF keeps its version floor in the client's
    /// trusted metadata, whatever mirror served it). Key rotation and an app update that pins
    /// other keys keep it: the identity stays.
    var identityKey: String { Self.identityPrefix + freshness.expectedIdentity }
    static let identityPrefix = "identity:"

    /// The mark accepted documents for this identity have set, read from disk; a mark kept
    /// under a URL by an earlier version counts too, when the URL names this identity (its
    /// last part, or a repository's folder before `index.json`) or is this source.
    ///
    /// - Throws: when the marks file is there but damaged: replay protection must not vanish
    ///   with a damaged file.
    func currentMark() throws -> HighWaterMark? {
        let identity = freshness.expectedIdentity
        return try marks.highest { key in
            if key == identityKey || key == source { return true }
            guard !key.hasPrefix(Self.identityPrefix), let url = URL(string: key) else { return false }
            let named = url.lastPathComponent == "index.json" ? url.deletingLastPathComponent() : url
            return named.lastPathComponent == identity
        }
    }

    /// Checks `offered` against `mark` (from ``currentMark()``) and the live version's sequence.
    func check(_ offered: FreshnessCheck.Offered, mark: HighWaterMark?, liveSequence: Int?) throws {
        do { try freshness.check(offered, mark: mark, liveSequence: liveSequence) } catch {
            throw FreshAirError.manifest(error)
        }
    }

    /// Raises the mark to an accepted document's sequence; only a signed one outlives its
    /// version (``FreshnessCheck/recordsMark``).
    func raise(sequence: Int?, digest: String) throws {
        guard let sequence, freshness.recordsMark else { return }
        try marks.raise(HighWaterMark(sequence: sequence, digest: digest), for: identityKey)
    }

    /// ``check(_:mark:liveSequence:)`` against the mark on disk, then ``raise(sequence:digest:)``:
    /// for a document that names everything it accepts by digest (a package, an index).
    func accept(_ offered: FreshnessCheck.Offered, liveSequence: Int?) throws {
        try check(offered, mark: try currentMark(), liveSequence: liveSequence)
        try raise(sequence: offered.sequence, digest: offered.digest)
    }
}
