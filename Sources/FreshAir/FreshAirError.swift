import Foundation

/// Everything that can stop a sync, each case saying what happened and what to do.
///
/// Whatever the error, the last good content stays live: a sync only switches versions
/// after every file has been downloaded and verified.
public enum FreshAirError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// The server answered with a status that is neither success nor "not modified".
    case httpStatus(Int, url: URL)
    /// The network failed below HTTP (refused, reset, timed out) after every retry.
    case transport(TransportError)
    /// A manifest could not be read or is unsafe.
    case manifest(ManifestError)
    /// A downloaded file's digest differs from the one its manifest lists.
    case hashMismatch(path: String, url: URL, expected: ContentHash, actual: ContentHash)
    /// A body ran past the size its manifest (or signed document) lists: `actual` bytes had
    /// arrived when it was stopped.
    case sizeMismatch(path: String, url: URL, expected: Int64, actual: Int64)
    /// The server announced (`Content-Length`) another size than the manifest lists; nothing
    /// of the body was read.
    case declaredSizeMismatch(path: String, url: URL, expected: Int64, declared: Int64)
    /// The server encoded a body (`Content-Encoding: gzip`, say) though FreshAir asks for
    /// `identity`, and the bytes are not the published file's. Nothing was installed or kept.
    case unrequestedEncoding(url: URL, encoding: String)
    /// A package could not be unpacked, or holds something unsafe; nothing of it was installed.
    case archive(ArchiveError, package: String)
    /// A body was larger than a configured cap.
    case bodyTooLarge(url: URL, limit: Int64)
    /// Another process holds the store's lock and did not release it in time.
    case storeLocked(path: String)
    /// The folder where the live version should appear holds something FreshAir did not make.
    case liveLocationOccupied(path: String)
    /// Writing `path` would have left the folder being installed (through a link, or where a
    /// file stands in place of a folder); nothing of that version was installed.
    case unsafePath(path: String, reason: String)
    /// A file-system operation failed.
    case fileSystem(operation: String, path: String, reason: String)
    /// ``BundleStore/rollBack()`` found no earlier version to go back to.
    case noPreviousVersion
    /// A package's bundled copy was installed and is live, but the server's copy could not be
    /// checked: the app has content, perhaps not the newest. Try again later.
    indirect case bundledCopyOnly(FreshAirError)

    public var description: String {
        switch self {
        case .httpStatus(let status, let url):
            return "HTTP \(status) for \(url): \(Self.advice(forStatus: status))"
        case .transport(let error):
            return "\(error). Check the network and the URL, then sync again; downloads resume where they stopped."
        case .manifest(let error):
            return "\(error). The publisher must fix the manifest and publish it again."
        case .hashMismatch(let path, let url, let expected, let actual):
            return
                "\(path): downloaded content does not match its manifest (expected \(expected.hex), got \(actual.hex) from \(url)). "
                + "The file or the manifest on the server is stale: the publisher must recompute the digests and publish both."
        case .sizeMismatch(let path, let url, let expected, let actual):
            return
                "\(path): \(url) sent more than the \(expected) bytes listed for it (\(actual) had arrived when it was stopped). "
                + "The file on the server is not the one its manifest describes: the publisher must recompute the digests and "
                + "publish the manifest again."
        case .declaredSizeMismatch(let path, let url, let expected, let declared):
            return
                "\(path): \(url) announces \(declared) bytes (Content-Length), but \(expected) are listed for it; nothing was read. "
                + "The file on the server is not the one its manifest describes (or an error page stands in its place): "
                + "the publisher must recompute the digests and publish the manifest again."
        case .unrequestedEncoding(let url, let encoding):
            return
                "\(url) came with Content-Encoding: \(encoding), which FreshAir does not ask for (it sends Accept-Encoding: identity), "
                + "and the bytes are not the published file's. Nothing was installed or kept; turn compression off for this file "
                + "on the server or CDN (nginx: gzip_types; S3: remove the Content-Encoding metadata)."
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
        case .fileSystem(let operation, let path, let reason):
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
        switch self {
        case .httpStatus(let status, _): return [408, 425, 429, 500, 502, 503, 504].contains(status)
        case .transport(let error): return error.kind != .other
        case .bundledCopyOnly(let error): return error.isTransient
        // A server or CDN edge that compresses now and then may send the plain bytes next time.
        case .unrequestedEncoding: return true
        default: return false
        }
    }

    /// The bytes arrived, but are not what was published (digest, size, archive structure).
    var isContentCheckFailure: Bool {
        switch self {
        case .hashMismatch, .sizeMismatch, .declaredSizeMismatch, .archive: return true
        default: return false
        }
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
