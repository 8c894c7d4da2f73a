import Foundation

/// What a root document (a bundle's root manifest) must pass, besides its signature, before
/// anything it names is installed: TUF's defences against rollback, replay, freeze and
/// mix-and-match, in one place.
///
/// - **Identity**: with keys pinned, the document must name the identity the app expects
///   (``SyncConfiguration/expectedIdentity``, by default the bundle folder's name), so one
///   key's signature on bundle B cannot be served at bundle A's URL.
/// - **Sequence**: never below the store's high-water mark for the source (which a rollback
///   does not lower), the live version's, or the app's ``SyncConfiguration/minimumSequence``
///   (which protects a fresh install from an old signed copy). With keys pinned, an equal
///   sequence passes only for the very document accepted before. Without keys there is no
///   high-water mark: a sequence nobody signed is anyone's to write, and a mark raised by one
///   forged `Int.max` would refuse every later release for good. The live version's sequence
///   still turns a stale copy away, and it lives and goes with that version (see
///   ``recordsMark``).
/// - **Expiry**: a document past `expires` (plus the tolerated clock skew) is refused, so a
///   server cannot freeze a device on old content for ever by replaying it.
///
/// With keys pinned, `identity`, `sequence` and `expires` are required.
struct FreshnessCheck {
    /// The document's URL, named in errors.
    var source: String
    var keysPinned: Bool
    /// The identity a document must name; enforced with keys pinned, or when the app set it.
    var expectedIdentity: String
    var identityIsExplicit: Bool
    var minimumSequence: Int?
    var clockSkew: Duration
    var clock: @Sendable () -> Date

    /// The fields of a document that this check reads.
    struct Offered {
        var identity: String?
        var sequence: Int?
        var expires: Date?
        /// SHA-256 of the document's bytes, hex.
        var digest: String
    }

    init(source: String, configuration: SyncConfiguration, defaultIdentity: String) {
        self.source = source
        keysPinned = configuration.pinsKeys
        expectedIdentity = configuration.expectedIdentity ?? defaultIdentity
        identityIsExplicit = configuration.expectedIdentity != nil
        minimumSequence = configuration.minimumSequence
        clockSkew = configuration.clockSkewTolerance
        clock = configuration.environment.now
    }

    /// Whether an accepted document's sequence is kept as a high-water mark that outlives the
    /// version it came with: only a signed one (see the type's notes).
    var recordsMark: Bool { keysPinned }

    func check(_ offered: Offered, mark: HighWaterMark?, liveSequence: Int?) throws(ManifestError) {
        func refuse(_ problem: ManifestError.Problem) -> ManifestError {
            ManifestError(source: source, problem: problem)
        }
        // A mark left by an unsigned document (written before marks needed keys) is not a floor.
        let mark = recordsMark ? mark : nil
        if keysPinned {
            for (field, present) in [
                ("identity", offered.identity != nil), ("sequence", offered.sequence != nil),
                ("expires", offered.expires != nil),
            ]
            where !present {
                throw refuse(.missingSignedField(field))
            }
        }
        if let identity = offered.identity, keysPinned || identityIsExplicit, identity != expectedIdentity {
            throw refuse(.wrongIdentity(expected: expectedIdentity, found: identity))
        }
        if let sequence = offered.sequence {
            if let floor = [mark?.sequence, liveSequence, minimumSequence].compactMap({ $0 }).max(), sequence < floor {
                throw refuse(.olderSequence(installed: floor, offered: sequence))
            }
            if keysPinned, let mark, sequence == mark.sequence, offered.digest != mark.digest {
                throw refuse(.replayedSequence(sequence))
            }
        } else if minimumSequence != nil {
            throw refuse(.missingSignedField("sequence"))
        }
        if let expires = offered.expires {
            try Self.checkExpiry(expires, source: source, clockSkew: clockSkew, now: clock())
        }
    }

    /// ``checkExpiry(_:source:clockSkew:now:)`` as a ``FreshAirError``, for callers that throw those.
    static func checkExpiryOrThrow(_ expires: Date, source: String, clockSkew: Duration, now: Date) throws {
        do { try checkExpiry(expires, source: source, clockSkew: clockSkew, now: now) } catch {
            throw FreshAirError.manifest(error)
        }
    }

    /// After a `304` kept what is installed: refuses it once the expiry its signed document
    /// gave has passed, by this configuration's clock and tolerated skew. Nothing to check
    /// without an expiry.
    static func checkStillValid(_ expires: Date?, source: String, configuration: SyncConfiguration) throws {
        guard let expires else { return }
        try checkExpiryOrThrow(
            expires,
            source: source,
            clockSkew: configuration.clockSkewTolerance,
            now: configuration.environment.now()
        )
    }

    /// Refuses a document whose `expires` date (plus the tolerated skew) has passed.
    static func checkExpiry(
        _ expires: Date,
        source: String,
        clockSkew: Duration,
        now: Date
    ) throws(ManifestError) {
        if expires.addingTimeInterval(clockSkew.seconds) < now {
            throw ManifestError(source: source, problem: .expired(expires))
        }
    }
}

extension ReleaseFields {
    /// What `FreshnessCheck` reads, with the digest of the document's bytes.
    func offered(digest: String) -> FreshnessCheck.Offered {
        FreshnessCheck.Offered(identity: identity, sequence: sequence, expires: expires, digest: digest)
    }
}
