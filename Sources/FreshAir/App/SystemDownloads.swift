public import Foundation

/// An update's downloads handed to the system, which moves the bytes while the app is not
/// running, and FreshAir verifies what comes back and installs it.
///
/// A background `URLSession` or a Background Assets extension downloads while the app is
/// suspended or not running, but checks nothing beyond TLS. FreshAir checks everything but runs
/// only in the app. This joins the two: ``plan()`` reads the server's release as a sync does
/// (signatures, digests, conditions, this device's files) and lists what this device lacks;
/// the system downloads each; ``accept(identifier:file:)`` verifies a delivered file's size and
/// SHA-256 and moves it into the store; ``installIfComplete(reporting:)`` runs the content's
/// sync once all have arrived, which links the delivered files into the new version instead of
/// downloading them and switches to it atomically.
///
/// ```swift
/// let downloads = SystemDownloads(content)
/// for download in try await downloads.plan() {
///     let task = session.downloadTask(with: download.url)   // a background session
///     task.taskDescription = download.identifier
///     task.resume()
/// }
/// // URLSessionDownloadDelegate, before the temporary file goes away:
/// try downloads.accept(identifier: task.taskDescription!, file: location)
/// // later, in the app or a BGTask:
/// try await downloads.installIfComplete()
/// ```
///
/// What it survives: the app killed between deliveries (the plan and every accepted file are
/// in the store), a file delivered twice or out of order, a truncated or wrong file (refused,
/// naming the file; the live version and the other deliveries stay), a newer release published
/// midway (the install's sync takes the newer release, linking what still matches and fetching
/// the rest itself), and an extension and its app sharing the store in an App Group container
/// (each step takes the store's lock). A bundle's files only: manifests, files the manifest
/// lists without a SHA-256 and size, and packages are fetched by the sync itself.
public struct SystemDownloads: Sendable {
    /// One file for the system to download.
    public struct Download: Sendable, Hashable, Codable {
        /// The file's SHA-256 (hex), which names it across plans: give it to the system with the
        /// task (a `URLSessionTask.taskDescription`, a `BAURLDownload` identifier) and back to
        /// ``SystemDownloads/accept(identifier:file:)``.
        public var identifier: String
        /// Where the bytes are.
        public var url: URL
        /// How many bytes the manifest says it has.
        public var size: Int64
        /// Where the file goes in the bundle (several when files share their bytes).
        public var paths: [String]
    }

    /// The content whose update the system downloads.
    public let content: FreshAirContent

    /// Hands `content`'s next update to the system. `content` must be a bundle
    /// (`…/App.freshair/`), not a package.
    public init(_ content: FreshAirContent) {
        self.content = content
    }

    /// The files the server's current release needs that this device lacks, and that have not
    /// been delivered yet. Reads the root manifest and its children, verified as a sync
    /// verifies them; downloads nothing and changes no content. Replaces any earlier plan:
    /// files delivered for it stay, and count for this one when their bytes are still needed.
    public func plan() async throws -> [Download] {
        // A package is one archive, fetched and unpacked as it streams: the sync's to download.
        guard !FreshAirContent.isPackage(content.remote) else { return [] }
        let planned = try await content.bundleSync().transferPlan()
        return try await BlockingPool.run { [deliveries] in
            try deliveries.withLock { box in
                try box.savePlan(planned)
                return try box.pending().map(Download.init)
            }
        }
    }

    /// The planned downloads the system has still to deliver: not accepted yet, and not live
    /// already. Reads the saved plan only, so a downloader extension may call it when the
    /// system asks which downloads to schedule.
    public func pending() throws -> [Download] {
        try deliveries.withLock { box in try box.pending().map(Download.init) }
    }

    /// Verifies a file the system delivered against the plan (its size, then its SHA-256) and
    /// moves it into the store (a rename on the same volume; a copy from another). Call it from
    /// the system's callback (`urlSession(_:downloadTask:didFinishDownloadingTo:)`,
    /// `backgroundDownload(_:finishedWithFileURL:)`), which must keep the file before it
    /// returns: it works on the calling thread, hashing the file (about a second a gigabyte on
    /// a phone) and then waiting for the store's lock. Returns `false`, leaving `file` where it
    /// is, when the current plan does not list `identifier` (a download of a plan a newer one
    /// replaced), or the file was accepted already or is live already.
    ///
    /// - Throws: ``FreshAirError`` with ``FreshAirError/Code/sizeMismatch`` or
    ///   ``FreshAirError/Code/hashMismatch`` when the file is not the planned bytes (truncated,
    ///   or another file): `file` is left where it is, nothing is kept, and the download is
    ///   still pending.
    @discardableResult
    public func accept(identifier: String, file: URL) throws -> Bool {
        guard let download = try deliveries.withLock({ box in try box.stillWanted(identifier) }) else { return false }
        // Hashed without the lock: a large file takes a while, and nothing of the store is read.
        try Self.verify(file, as: download)
        return try deliveries.withLock { box in try box.keep(file, as: download) }
    }

    /// Installs the update once every planned file was accepted: runs the content's sync,
    /// which verifies the release again, links the delivered files into the new version and
    /// switches to it atomically. `nil`, doing nothing, while downloads are pending. After it
    /// the plan is gone; what a newer release needs beyond the delivered files the sync
    /// fetched itself.
    @discardableResult
    public func installIfComplete(
        reporting report: @escaping @Sendable (SyncEvent) -> Void = { _ in }
    ) async throws -> SyncSummary? {
        guard try await BlockingPool.run({ [self] in try pending().isEmpty }) else { return nil }
        let summary = try await content.run(reporting: report)
        try await BlockingPool.run { [deliveries] in try deliveries.withLock { box in box.forgetPlan() } }
        return summary
    }

    /// The store's plan and delivered files.
    private var deliveries: DeliveredFiles { DeliveredFiles(store: content.store) }

    private static func verify(_ file: URL, as download: PlannedDelivery) throws {
        let path = download.paths.first ?? download.sha256
        guard let size = Disk.status(file.path)?.size else { throw Disk.failure("read the delivered file", file.path) }
        guard size == download.size else {
            throw FreshAirError.sizeMismatch(path: path, url: download.url, expected: download.size, actual: size)
        }
        let (digest, _) = try Disk.hash(file.path, algorithm: .sha256)
        guard digest.hex == download.sha256 else {
            throw FreshAirError.hashMismatch(
                path: path,
                url: download.url,
                expected: ContentHash(hex: download.sha256) ?? digest,
                actual: digest
            )
        }
    }
}

extension SystemDownloads.Download {
    init(_ planned: PlannedDelivery) {
        self.init(identifier: planned.sha256, url: planned.url, size: planned.size, paths: planned.paths)
    }
}
