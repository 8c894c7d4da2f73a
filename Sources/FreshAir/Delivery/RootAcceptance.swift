import Foundation

/// How every delivery mode accepts its signed root document (a bundle's root manifest, a
/// package's `.sig`, a repository's `index.json`): ``FreshnessCheck`` against the store's
/// high-water mark for the source, then, once everything the document names has passed its
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
    /// What the mark is kept under: the bundle, package or index URL.
    let markKey: String

    /// - Parameters:
    ///   - document: the signed document's URL, named in errors.
    ///   - markKey: what the mark is kept under.
    ///   - marks: the store's high-water marks.
    ///   - defaultIdentity: the identity expected when the app set none.
    init(
        document: URL,
        markKey: String,
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
        self.markKey = markKey
    }

    /// The mark accepted documents from this source have set, read from disk.
    ///
    /// - Throws: when the marks file is there but damaged: replay protection must not vanish
    ///   with a damaged file.
    func currentMark() throws -> HighWaterMark? { try marks.mark(for: markKey) }

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
        try marks.raise(HighWaterMark(sequence: sequence, digest: digest), for: markKey)
    }

    /// ``check(_:mark:liveSequence:)`` against the mark on disk, then ``raise(sequence:digest:)``:
    /// for a document that names everything it accepts by digest (a package, an index).
    func accept(_ offered: FreshnessCheck.Offered, liveSequence: Int?) throws {
        try check(offered, mark: try currentMark(), liveSequence: liveSequence)
        try raise(sequence: offered.sequence, digest: offered.digest)
    }
}
