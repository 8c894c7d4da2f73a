import Foundation

/// Limits and policies shared by every delivery mode.
public struct SyncConfiguration: Sendable {
    /// Files downloaded at once. Through a transport that pipelines (the
    /// `FreshAirAsyncHTTPClient` product's `PipeliningTransport`), small files count for less:
    /// as many more of them are in flight as it sends on one connection.
    public var concurrency: Int = 8
    /// How transient failures (connection errors, 408, 429, 5xx) are retried.
    public var retry = RetryPolicy()
    /// Headers sent with every request (authorization, a user agent).
    public var headers: [(name: String, value: String)] = []
    /// The longest wait for a response head.
    public var requestTimeout: Duration = .seconds(30)
    /// The longest one whole update (a sync, a package or repository update) may take before
    /// it is cancelled; `nil`: no limit beyond each request's own.
    public var deadline: Duration? = .seconds(3600)
    /// How far ahead of this device's clock a server's `Last-Modified` may be and still be
    /// remembered; a later one is ignored (see `HTTPValidators`).
    public var clockSkewTolerance: Duration = .seconds(600)
    /// The clocks, sleep and random numbers every run reads: the system's; a test drives its own
    /// instead of waiting (`FreshAirTesting`'s `TestClock`).
    package var environment = SyncEnvironment.system
    /// The slowest body tolerated: one below it for a whole window is abandoned (and
    /// resumed by the retry or the next sync), so no server can hold a sync open for ever.
    package var minimumThroughput = ThroughputFloor(bytesPerSecond: 1024, window: .seconds(30))
    /// A manifest or index larger than this is refused.
    public var maxDocumentSize: Int = 32 << 20
    /// A fetched root manifest at least this large is written to the update's partials as it
    /// arrives, read from there mapped, and moved into the new version: its bytes are never held
    /// in memory (100,000 entries are 14 MB of manifest). Tests set 0.
    package var spillDocumentsFrom: Int = 1 << 20
    /// A selection of more files than this keeps their digests and sizes in an unnamed file of
    /// the update's partials, 41 bytes a file (see `DigestsAndSizes`). Tests set 1.
    package var spillSelectionAfter: Int = 1_600
    /// All manifests of one bundle (the root and every child) together may be no larger.
    public var maxManifestTreeSize: Int = 64 << 20
    /// All manifests of one bundle together may list no more entries, selected or not: what a
    /// sync holds in memory grows with them, about 0.22 KB an entry (docs/SECURITY.md gives the
    /// measured cost; a signed root holds its list of entries as well). 200,000 by default, as
    /// many as a package may hold.
    public var maxManifestEntries: Int = 200_000
    /// A file or package larger than this is refused, whatever its manifest says.
    public var maxFileSize: Int64 = 8 << 30
    /// The cap on a body whose size nothing declares (a legacy manifest entry without
    /// `size`, a package): a hostile server cannot fill the disk with an endless body.
    public var maxUndeclaredFileSize: Int64 = 2 << 30
    /// What packages and repository archives may unpack to: size, entry and expansion caps,
    /// and whether symbolic links that stay inside are allowed (refused by default).
    package var extraction = ExtractionLimits()
    /// How deep child manifests may nest.
    public var maxManifestDepth: Int = 8
    /// When a changed large file (one with a chunk index) is rebuilt from the chunks the
    /// device has, and how its ranges are fetched.
    package var chunkDeltas = ChunkDeltaPolicy()
    /// Ed25519 keys the app pins. When set, a bundle's root manifest must be signed by one
    /// of them (`breeze sign`) and every entry must carry a digest; anything else is refused
    /// and the installed content stays. Empty (the default): manifests are not checked.
    public var trustedKeys: [TrustedKey] = []
    /// Keys pinned through a key document the publisher can rotate, with a threshold of
    /// signers (see ``KeyRotation``); used instead of ``trustedKeys`` when set.
    public var keyRotation: KeyRotation?
    /// The identity a signed root manifest must name (`"identity"`, written by `breeze sign
    /// --identity`). `nil`: the bundle folder's name in the URL (`App.freshair`). Enforced with
    /// keys pinned, and whenever set.
    public var expectedIdentity: String?
    /// The lowest root manifest `sequence` this app accepts, even on a fresh install: ship the
    /// sequence current at release, and no older signed copy can be installed.
    public var minimumSequence: Int?

    /// The defaults: 8 downloads at a time, retries with back-off, no keys pinned.
    public init() {}

    /// Whether the app pins keys, one way or the other: then nothing unsigned is installed.
    var pinsKeys: Bool { !trustedKeys.isEmpty || keyRotation != nil }

    /// The cap on one body: ``maxFileSize``, and ``maxUndeclaredFileSize`` too when nothing
    /// signed or listed declares its size.
    func sizeCap(declared: Bool) -> Int64 { declared ? maxFileSize : min(maxFileSize, maxUndeclaredFileSize) }
}
