public import Foundation

/// Everything that can stop a sync: what happened, what to do, and the error underneath.
///
/// Whatever the error, the last good content stays live: a sync only switches versions
/// after every file has been downloaded and verified.
///
/// `FreshAirError` is a struct, not an enum, so new kinds of failure can be added without
/// breaking an app's `switch` (the pattern of AsyncHTTPClient's `HTTPClientError`). Compare
/// ``code`` to tell kinds apart, and read the details that kind carries:
///
/// ```swift
/// do {
///     try await sync.run()
/// } catch let error as FreshAirError where error.code == .httpStatus && error.status == 404 {
///     // not published yet
/// } catch let error as FreshAirError where error.isTransient {
///     // try again later
/// }
/// ```
public struct FreshAirError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// A kind of failure; new kinds may be added in later releases.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Base: String, Sendable {
            case httpStatus, transport, manifest, hashMismatch, sizeMismatch, declaredSizeMismatch
            case unrequestedEncoding, archive, bodyTooLarge, storeLocked, liveLocationOccupied, unsafePath
            case fileSystem, noPreviousVersion, bundledCopyOnly
        }
        fileprivate let base: Base

        /// The server answered with a status that is neither success nor "not modified" (``status``, ``url``).
        public static let httpStatus = Code(base: .httpStatus)
        /// The network failed below HTTP (refused, reset, timed out) after every retry; ``description``
        /// says which.
        public static let transport = Code(base: .transport)
        /// A manifest could not be read or is unsafe; ``description`` says what, and what the publisher
        /// must do.
        public static let manifest = Code(base: .manifest)
        /// A downloaded file's digest differs from the one its manifest lists (``path``, ``url``;
        /// ``description`` names both digests).
        public static let hashMismatch = Code(base: .hashMismatch)
        /// A body ran past the size its manifest (or signed document) lists: ``receivedSize`` bytes had
        /// arrived when it was stopped.
        public static let sizeMismatch = Code(base: .sizeMismatch)
        /// The server announced (`Content-Length`) another size (``receivedSize``) than the manifest
        /// lists (``expectedSize``); nothing of the body was read.
        public static let declaredSizeMismatch = Code(base: .declaredSizeMismatch)
        /// The server encoded a body (`Content-Encoding: gzip`, say) though FreshAir asks for `identity`,
        /// and the bytes are not the published file's. Nothing was installed or kept.
        public static let unrequestedEncoding = Code(base: .unrequestedEncoding)
        /// A package could not be unpacked, or holds something unsafe (``description`` names the
        /// entry); nothing of it was installed.
        public static let archive = Code(base: .archive)
        /// A body was larger than a configured cap (``sizeLimit``).
        public static let bodyTooLarge = Code(base: .bodyTooLarge)
        /// Another process holds the store's lock and did not release it in time.
        public static let storeLocked = Code(base: .storeLocked)
        /// The folder where the live version should appear holds something FreshAir did not make.
        public static let liveLocationOccupied = Code(base: .liveLocationOccupied)
        /// Writing ``path`` would have left the folder being installed (through a link, or where a file
        /// stands in place of a folder); nothing of that version was installed.
        public static let unsafePath = Code(base: .unsafePath)
        /// A file-system operation failed (the system's error is ``underlying``, when there is one).
        public static let fileSystem = Code(base: .fileSystem)
        /// ``BundleStore/rollBack()`` found no earlier version to go back to.
        public static let noPreviousVersion = Code(base: .noPreviousVersion)
        /// A package's bundled copy was installed and is live, but the server's copy could not be checked
        /// (why is ``underlying``, a `FreshAirError`): the app has content, perhaps not the newest.
        public static let bundledCopyOnly = Code(base: .bundledCopyOnly)

        /// The kind's name, as in `httpStatus`.
        public var description: String { base.rawValue }
    }

    /// What happened, with the details of each kind; private so kinds can be added.
    fileprivate enum Reason: Sendable {
        case httpStatus(Int, url: URL)
        case transport(TransportError)
        case manifest(ManifestError)
        case hashMismatch(path: String, url: URL, expected: ContentHash, actual: ContentHash)
        case sizeMismatch(path: String, url: URL, expected: Int64, actual: Int64)
        case declaredSizeMismatch(path: String, url: URL, expected: Int64, declared: Int64)
        case unrequestedEncoding(url: URL, encoding: String)
        case archive(ArchiveError, package: String)
        case bodyTooLarge(url: URL, limit: Int64)
        case storeLocked(path: String)
        case liveLocationOccupied(path: String)
        case unsafePath(path: String, reason: String)
        case fileSystem(operation: String, path: String, reason: String, underlying: (any Error)?)
        case noPreviousVersion
        indirect case bundledCopyOnly(FreshAirError)
    }

    private let reason: Reason
    /// The document that lists the file of a digest or size failure, which the words name.
    package private(set) var listing: Listing = .manifest
    private init(_ reason: Reason) { self.reason = reason }

    /// What lists a file with its digest and size: a device checks the file against it.
    package enum Listing: Sendable, Hashable {
        /// A bundle's manifest.
        case manifest
        /// A package's signed document, `<package>.sig`.
        case packageSignature
        /// A repository's signed `index.json`.
        case repositoryIndex

        /// The document, as the words of a failure name it.
        func document(of url: URL) -> String {
            switch self {
            case .manifest: return "its manifest"
            case .packageSignature: return "its signed document (\(url.lastPathComponent)\(PackageSignature.suffix))"
            case .repositoryIndex: return "the repository's signed index"
            }
        }

        /// What the publisher does when a file is not the one its document describes.
        var remedy: String {
            switch self {
            case .manifest: return "the publisher must recompute the digests and publish the manifest again"
            case .packageSignature: return "the publisher must sign the package as it is published, and publish both"
            case .repositoryIndex: return "the publisher must publish the archive with the index that lists it"
            }
        }

        /// That the file at `url` is not the one its document describes (`aside` after the
        /// document), and what the publisher does.
        func notDescribed(_ url: URL, aside: String = "") -> String {
            "The file on the server is not the one \(document(of: url)) describes\(aside): \(remedy)."
        }
    }

    /// What kind of failure this is.
    public var code: Code {
        switch reason {
        case .httpStatus: return .httpStatus
        case .transport: return .transport
        case .manifest: return .manifest
        case .hashMismatch: return .hashMismatch
        case .sizeMismatch: return .sizeMismatch
        case .declaredSizeMismatch: return .declaredSizeMismatch
        case .unrequestedEncoding: return .unrequestedEncoding
        case .archive: return .archive
        case .bodyTooLarge: return .bodyTooLarge
        case .storeLocked: return .storeLocked
        case .liveLocationOccupied: return .liveLocationOccupied
        case .unsafePath: return .unsafePath
        case .fileSystem: return .fileSystem
        case .noPreviousVersion: return .noPreviousVersion
        case .bundledCopyOnly: return .bundledCopyOnly
        }
    }

    /// The error this one reports: a `TransportError`, a `ManifestError`, an `ArchiveError`,
    /// the system's error behind a ``Code/fileSystem`` failure, or, for ``Code/bundledCopyOnly``, the
    /// `FreshAirError` that kept the server's copy out.
    public var underlying: (any Error)? {
        switch reason {
        case .transport(let error): return error
        case .manifest(let error): return error
        case .archive(let error, _): return error
        case .fileSystem(_, _, _, let error): return error
        case .bundledCopyOnly(let error): return error
        default: return nil
        }
    }

    /// Whether a write failed for want of space (`ENOSPC`, or `EDQUOT` past a quota).
    package var isOutOfSpace: Bool {
        guard case .fileSystem(_, _, _, let error) = reason else { return false }
        if let posix = error as? POSIXError { return posix.code == .ENOSPC || posix.code == .EDQUOT }
        let system = error as NSError?
        return system?.domain == NSPOSIXErrorDomain && [ENOSPC, EDQUOT].contains(Int32(system?.code ?? 0))
    }

    /// The failure below HTTP, for ``Code/transport``.
    package var transportError: TransportError? { underlying as? TransportError }
    /// What is wrong with the manifest, for ``Code/manifest``.
    package var manifestError: ManifestError? { underlying as? ManifestError }
    /// What is wrong with the package, for ``Code/archive``.
    package var archiveError: ArchiveError? { underlying as? ArchiveError }

    /// The URL that answered badly, when one did.
    public var url: URL? {
        switch reason {
        case .httpStatus(_, let url), .unrequestedEncoding(let url, _), .bodyTooLarge(let url, _): return url
        case .hashMismatch(_, let url, _, _), .sizeMismatch(_, let url, _, _), .declaredSizeMismatch(_, let url, _, _):
            return url
        case .transport(let error): return error.url
        default: return nil
        }
    }

    /// The file concerned: a path in the bundle for content checks, the package for
    /// ``Code/archive``, a path on disk for the store's failures.
    public var path: String? {
        switch reason {
        case .hashMismatch(let path, _, _, _), .sizeMismatch(let path, _, _, _),
            .declaredSizeMismatch(let path, _, _, _):
            return path
        case .archive(_, let package): return package
        case .storeLocked(let path), .liveLocationOccupied(let path), .unsafePath(let path, _),
            .fileSystem(_, let path, _, _):
            return path
        default: return nil
        }
    }

    /// The HTTP status, for ``Code/httpStatus``.
    public var status: Int? {
        if case .httpStatus(let status, _) = reason { return status }
        return nil
    }

    /// The size the manifest (or signed document) lists, for size mismatches.
    public var expectedSize: Int64? {
        switch reason {
        case .sizeMismatch(_, _, let expected, _), .declaredSizeMismatch(_, _, let expected, _): return expected
        default: return nil
        }
    }

    /// The size that arrived (``Code/sizeMismatch``) or was announced (``Code/declaredSizeMismatch``).
    public var receivedSize: Int64? {
        switch reason {
        case .sizeMismatch(_, _, _, let actual), .declaredSizeMismatch(_, _, _, let actual): return actual
        default: return nil
        }
    }

    /// The cap a body ran past, for ``Code/bodyTooLarge``.
    public var sizeLimit: Int64? {
        if case .bodyTooLarge(_, let limit) = reason { return limit }
        return nil
    }

    /// The digest the manifest lists, for ``Code/hashMismatch``.
    package var expectedDigest: ContentHash? {
        if case .hashMismatch(_, _, let expected, _) = reason { return expected }
        return nil
    }

    /// The digest of what arrived, for ``Code/hashMismatch``.
    package var receivedDigest: ContentHash? {
        if case .hashMismatch(_, _, _, let actual) = reason { return actual }
        return nil
    }

    /// The encoding the server applied, for ``Code/unrequestedEncoding``.
    public var contentEncoding: String? {
        if case .unrequestedEncoding(_, let encoding) = reason { return encoding }
        return nil
    }

    /// This error with an archive failure named by `package` (its URL, say) instead of the
    /// partial file it was read from; other kinds are returned as they are.
    func namingPackage(_ package: String) -> FreshAirError {
        guard case .archive(let error, _) = reason else { return self }
        return .archive(error, package: package)
    }

    /// Why a write was refused, for ``Code/unsafePath``.
    var unsafePathReason: String? {
        if case .unsafePath(_, let why) = reason { return why }
        return nil
    }

    public var description: String {
        switch reason {
        case .httpStatus(let status, let url) where url.isFileURL:
            // A file:// source is read from disk: no server answered, whatever the status says.
            // On a device, a file its Data Protection class closes reads as refused too.
            let locked =
                DeviceClass.hasDataProtectionHere ? " (or closed by Data Protection while the device is locked)" : ""
            let what = status == 403 ? "not readable by this user\(locked)" : "no such file"
            return "\(url.path): \(what). Check the path: a file:// source is a folder or file on this machine."
        case .httpStatus(404, let url):
            return "HTTP 404 for \(url): \(Self.misplacedAdvice(url) ?? Self.advice(forStatus: 404))"
        case .httpStatus(let status, let url):
            return "HTTP \(status) for \(url): \(Self.advice(forStatus: status))"
        case .transport(let error) where error.kind == .redirect:
            return
                "\(error). The server's redirect must change (or the app must use the final URL): trying again gets the same answer."
        case .transport(let error) where error.kind == .tls:
            return "\(error). The server's TLS set-up or the URL must change: trying again gets the same answer."
        case .transport(let error):
            return "\(error). Check the network and the URL, then sync again; downloads resume where they stopped."
        case .manifest(let error):
            return error.saysWhatToDo
                ? "\(error)." : "\(error). The publisher must fix this document and publish it again."
        case .hashMismatch(let path, let url, let expected, let actual):
            let stale =
                listing == .manifest
                ? "The file or the manifest on the server is stale: the publisher must recompute the digests and publish both."
                : listing.notDescribed(url)
            return
                "\(path): downloaded content does not match \(listing.document(of: url)) (expected \(expected.hex), got \(actual.hex) from \(url)). "
                + stale
        case .sizeMismatch(let path, let url, let expected, let actual):
            return
                "\(path): \(url) sent more than the \(expected) bytes listed for it (\(actual) had arrived when it was stopped). "
                + listing.notDescribed(url)
        case .declaredSizeMismatch(let path, let url, let expected, let declared):
            return
                "\(path): \(url) announces \(declared) bytes (Content-Length), but \(expected) are listed for it; nothing was read. "
                + listing.notDescribed(url, aside: " (or an error page stands in its place)")
        case .unrequestedEncoding(let url, let encoding):
            return
                "\(url) came with Content-Encoding: \(encoding), which FreshAir does not ask for (it sends Accept-Encoding: identity), "
                + "and the bytes are not the published file's. Nothing was installed or kept; turn compression off for this file "
                + "on the server or CDN (nginx: gzip_types; S3: remove the Content-Encoding metadata)."
        case .archive(let error, let package) where package.hasPrefix("/") || package.hasPrefix("file:"):
            // A file on this machine: an app's bundled copy, or a `file://` source.
            return
                "\(package): \(error). The package was not installed and the installed content stays; the file itself is "
                + "damaged: make it again (an app's bundled copy: build the app with a whole one)."
        case .archive(let error, let package):
            return
                "\(package): \(error). The package was not installed and the installed content stays; if this persists, "
                + "the package on the server is damaged: publish it again."
        case .bodyTooLarge(let url, let limit):
            return
                "\(url) is larger than the \(limit)-byte limit; raise the limit if the file is meant to be this large."
        case .storeLocked(let path):
            return "another process is updating \(path); wait for it to finish, or stop it."
        case .liveLocationOccupied(let path):
            return
                "\(path) exists and was not made by FreshAir; choose a new or empty folder (FreshAir replaces it with a link to the live version)."
        case .unsafePath(let path, let reason):
            return
                "refused to write \"\(path.debugEscaped)\": \(reason). The content was not installed and the live version stays; "
                + "the server is sending unsafe paths."
        case .fileSystem(let operation, let path, let reason, _):
            return "could not \(operation) \(path): \(reason)"
        case .noPreviousVersion:
            return "there is no earlier version to roll back to."
        case .bundledCopyOnly(let error):
            return
                "the bundled copy is installed and live, but the server's copy could not be checked or installed: \(error)"
        }
    }

    public var errorDescription: String? { description }

    /// Whether trying again later could succeed without anyone changing anything.
    public var isTransient: Bool {
        switch reason {
        case .httpStatus(let status, _): return [408, 425, 429, 500, 502, 503, 504].contains(status)
        case .transport(let error): return ![.other, .redirect, .tls].contains(error.kind)
        case .bundledCopyOnly(let error): return error.isTransient
        // A server or CDN edge that compresses now and then may send the plain bytes next time.
        case .unrequestedEncoding: return true
        default: return false
        }
    }

    /// The bytes arrived, but are not what was published (digest, size, archive structure).
    var isContentCheckFailure: Bool {
        switch reason {
        case .hashMismatch, .sizeMismatch, .declaredSizeMismatch, .archive: return true
        default: return false
        }
    }

    /// What a 404 means when its URL shows the app's URL in the wrong place, or `nil`:
    /// `…/content.tgz/manifest.json`, a package asked for as a bundle folder
    /// (`BundleSync(remote: …/content.tgz)`); `…/<id>/<id>/index.json`, a repository's own
    /// folder given as its source (`Repository(source: …/<id>/, id: <id>)`).
    static func misplacedAdvice(_ url: URL) -> String? {
        let parts = url.pathComponents
        if url.lastPathComponent == "manifest.json",
            ArchiveFormat(fileName: url.deletingLastPathComponent().lastPathComponent) != nil
        {
            let package = url.deletingLastPathComponent().lastPathComponent
            return
                "\(package) is a package, not a bundle folder; sync a package with FreshAirContent or PackageUpdater (`breeze sync` of its URL), and a bundle by its folder's URL (…/App.freshair/)."
        }
        if parts.count >= 3, parts[parts.count - 1] == "index.json", parts[parts.count - 2] != "/",
            parts[parts.count - 2] == parts[parts.count - 3]
        {
            let given = url.deletingLastPathComponent().deletingLastPathComponent()
            let id = given.lastPathComponent
            let source = given.deletingLastPathComponent()
            return
                "a repository's source is the folder that holds \(id)/, not \(id)/ itself. Give \(source.absoluteString) as the source, whose \(id)/index.json is \(given.appendingPathComponent("index.json").absoluteString)."
        }
        return nil
    }

    /// What a status most likely means for static hosting.
    static func advice(forStatus status: Int) -> String {
        switch status {
        case 401: return "the server wants credentials; pass them as headers."
        case 403: return "forbidden. The file is not readable by the web server's account, or not public on S3."
        case 404: return "not found. Check the URL, and that the file was published."
        case 410: return "gone. The content was withdrawn from this URL."
        case 416: return "the requested range is not available; the file changed while downloading. Sync again."
        case 429: return "too many requests; retried, then gave up. Sync again later."
        case 500...599: return "the server failed; retried, then gave up. Sync again later."
        default: return "unexpected status."
        }
    }
}

// Makers, one per kind; the package's own code throws through these.
extension FreshAirError {
    package static func httpStatus(_ status: Int, url: URL) -> Self { Self(.httpStatus(status, url: url)) }
    package static func transport(_ error: TransportError) -> Self { Self(.transport(error)) }
    package static func manifest(_ error: ManifestError) -> Self { Self(.manifest(error)) }
    package static func hashMismatch(
        path: String,
        url: URL,
        expected: ContentHash,
        actual: ContentHash,
        listedIn listing: Listing = .manifest
    ) -> Self {
        Self(.hashMismatch(path: path, url: url, expected: expected, actual: actual)).listed(in: listing)
    }
    package static func sizeMismatch(
        path: String,
        url: URL,
        expected: Int64,
        actual: Int64,
        listedIn listing: Listing = .manifest
    ) -> Self {
        Self(.sizeMismatch(path: path, url: url, expected: expected, actual: actual)).listed(in: listing)
    }
    package static func declaredSizeMismatch(
        path: String,
        url: URL,
        expected: Int64,
        declared: Int64,
        listedIn listing: Listing = .manifest
    ) -> Self {
        Self(.declaredSizeMismatch(path: path, url: url, expected: expected, declared: declared)).listed(in: listing)
    }
    private func listed(in listing: Listing) -> Self {
        var error = self
        error.listing = listing
        return error
    }
    package static func unrequestedEncoding(url: URL, encoding: String) -> Self {
        Self(.unrequestedEncoding(url: url, encoding: encoding))
    }
    package static func archive(_ error: ArchiveError, package: String) -> Self {
        Self(.archive(error, package: package))
    }
    package static func bodyTooLarge(url: URL, limit: Int64) -> Self { Self(.bodyTooLarge(url: url, limit: limit)) }
    /// Whether a body was refused for passing the size it was allowed.
    var isBodyTooLarge: Bool { if case .bodyTooLarge = reason { true } else { false } }
    package static func storeLocked(path: String) -> Self { Self(.storeLocked(path: path)) }
    package static func liveLocationOccupied(path: String) -> Self { Self(.liveLocationOccupied(path: path)) }
    package static func unsafePath(path: String, reason: String) -> Self {
        Self(.unsafePath(path: path, reason: reason))
    }
    /// `reason` is the system's words for `underlying`, which is kept for callers that look deeper.
    package static func fileSystem(
        operation: String,
        path: String,
        reason: String,
        underlying: (any Error)? = nil
    ) -> Self {
        Self(.fileSystem(operation: operation, path: path, reason: reason, underlying: underlying))
    }
    package static var noPreviousVersion: Self { Self(.noPreviousVersion) }
    package static func bundledCopyOnly(_ error: FreshAirError) -> Self { Self(.bundledCopyOnly(error)) }
}
