import Foundation

/// Answers `file://` URLs the way a static web server answers for its folder, so that a
/// bundle, package or repository in a local folder (the app's own resources, a mounted
/// volume, a test fixture) syncs through the same verification, resume and atomic switch as
/// one on a server.
///
/// Responses carry an `ETag` (inode, size and modification time to the nanosecond) and a
/// `Last-Modified`; `If-None-Match` and `If-Modified-Since` give `304`, and `Range` with
/// `If-Range` gives `206`. A missing file is `404`, an unreadable one `403`, a folder `404`.
/// FreshAir uses it for every `file://` URL, whatever transport a sync was given.
///
/// A sync confines it to the folder its source is in, as `breeze serve` confines what it
/// serves: a file that a symbolic link takes outside that folder is `404`, so a source folder
/// (a shared or mounted volume) cannot hand over a private file from elsewhere by linking it.
package struct LocalFileTransport: HTTPTransport {
    /// Bytes handed on per body chunk.
    static let chunkSize = 256 * 1024

    /// The source file's permission bits (octal), so that what is installed from it is never
    /// readable by more users than the source is. Read only from `file://` answers: a server's
    /// header of that name means nothing.
    static let modeHeader = "X-FreshAir-Source-Mode"

    /// The permission bits for a file installed from a source with `header`'s mode: the store's
    /// usual 0644, narrowed to the source's (a 0600 source stays 0600); `nil` when there is no header.
    static func installedMode(_ header: String?) -> mode_t? {
        guard let header, let mode = UInt32(header, radix: 8), mode <= 0o777 else { return nil }
        return mode_t(0o644 & mode)
    }

    /// The folder every answered file must resolve inside, links already resolved; `nil`: anywhere.
    let root: String?

    /// A transport for `file://` URLs anywhere on disk.
    package init() { root = nil }

    /// A transport that answers only files whose path, every link resolved, lies inside `root`
    /// (resolved here, once: a sync makes one transport and asks it for every file). A root that
    /// does not exist is kept as it is: no file inside it exists either.
    init(confinedTo root: URL) {
        guard let resolved = realpath(root.path, nil) else {
            self.root = root.path
            return
        }
        defer { free(resolved) }
        self.root = String(cString: resolved)
    }

    package func get<Result: Sendable>(
        _ request: HTTPGetRequest,
        handle: (HTTPResponseHead, ResponseBody) async throws -> Result
    ) async throws -> Result {
        let url = request.url
        guard url.isFileURL else {
            throw TransportError(kind: .other, url: url, detail: "LocalFileTransport answers file:// URLs only")
        }
        let path = url.path
        // Non-blocking, so that a FIFO named by the URL cannot hang the open; only regular files are served.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = errno
            return try await handle(
                HTTPResponseHead(status: code == EACCES || code == EPERM ? 403 : 404, headers: []),
                .empty
            )
        }
        let file = OpenFile(descriptor)
        defer { file.close() }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
            Self.isInside(root, path: Self.openedPath(descriptor) ?? path)
        else {
            return try await handle(HTTPResponseHead(status: 404, headers: []), .empty)
        }
        let size = Int64(info.st_size)
        let modified = Self.modificationTime(info)
        let etag =
            "\"\(String(UInt64(info.st_ino), radix: 16))-\(String(size, radix: 16))-\(String(modified.nanoseconds, radix: 16))\""
        let lastModified = HTTPDate.format(Date(timeIntervalSince1970: TimeInterval(modified.seconds)))
        var headers = [
            ("ETag", etag), ("Last-Modified", lastModified), ("Accept-Ranges", "bytes"),
            (Self.modeHeader, String(UInt32(info.st_mode) & 0o777, radix: 8)),
        ]
        if Self.notModified(head: request, etag: etag, modifiedSeconds: modified.seconds) {
            return try await handle(HTTPResponseHead(status: 304, headers: headers), .empty)
        }
        var start: Int64 = 0
        var status = 200
        if let range = Self.header("Range", in: request),
            Self.ifRangeHolds(request, etag: etag, lastModified: lastModified)
        {
            guard let first = Self.openEndedStart(range) else {
                // Only `bytes=N-` is ever sent by FreshAir; anything else gets the whole file.
                return try await respond(200, headers, file: file, from: 0, size: size, handle: handle)
            }
            guard first < size else {
                return try await handle(
                    HTTPResponseHead(status: 416, headers: [("Content-Range", "bytes */\(size)")]),
                    .empty
                )
            }
            start = first
            status = 206
            headers.append(("Content-Range", "bytes \(first)-\(size - 1)/\(size)"))
        }
        return try await respond(status, headers, file: file, from: start, size: size, handle: handle)
    }

    private func respond<Result: Sendable>(
        _ status: Int,
        _ headers: [(String, String)],
        file: OpenFile,
        from start: Int64,
        size: Int64,
        handle: (HTTPResponseHead, ResponseBody) async throws -> Result
    ) async throws -> Result {
        let head = HTTPResponseHead(
            status: status,
            headers: headers.map { ($0.0, $0.1) } + [("Content-Length", String(size - start))]
        )
        var offset = start
        let body = ResponseBody {
            guard offset < size else { return nil }
            let count = Int(min(Int64(Self.chunkSize), size - offset))
            var read = 0
            let buffer = [UInt8](unsafeUninitializedCapacity: count) { bytes, initialized in
                read = pread(file.descriptor, bytes.baseAddress, count, off_t(offset))
                initialized = max(read, 0)
            }
            guard read > 0 else { return nil }  // The file shrank: the length check reports it.
            offset += Int64(read)
            return buffer
        }
        return try await handle(head, body)
    }

    /// `304` when `If-None-Match` names the current ETag, or, without it, when
    /// `If-Modified-Since` is not before the file's modification (to the second, as HTTP dates are).
    static func notModified(head request: HTTPGetRequest, etag: String, modifiedSeconds: Int64) -> Bool {
        if let candidates = header("If-None-Match", in: request) {
            return candidates.split(separator: ",").contains {
                $0.trimmingCharacters(in: .whitespaces) == etag || $0.trimmingCharacters(in: .whitespaces) == "*"
            }
        }
        if let since = header("If-Modified-Since", in: request).flatMap(HTTPDate.parse) {
            return Int64(since.timeIntervalSince1970) >= modifiedSeconds
        }
        return false
    }

    /// A range applies only while `If-Range` still names this file's ETag or date.
    static func ifRangeHolds(_ request: HTTPGetRequest, etag: String, lastModified: String) -> Bool {
        guard let validator = header("If-Range", in: request) else { return true }
        return validator == etag || validator == lastModified
    }

    /// `N` of `bytes=N-`.
    static func openEndedStart(_ range: String) -> Int64? {
        guard range.hasPrefix("bytes="), range.hasSuffix("-") else { return nil }
        let digits = range.dropFirst(6).dropLast()
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int64(digits)
    }

    /// The path of the file a descriptor has open, links resolved, as the kernel knows it: what
    /// was opened, not what the name points at now (a link swapped after the open cannot pass).
    static func openedPath(_ descriptor: Int32) -> String? {
        #if canImport(Darwin)
        var buffer = [CChar](repeating: 0, count: Int(MAXPATHLEN))
        guard fcntl(descriptor, F_GETPATH, &buffer) == 0 else { return nil }
        return String(cString: buffer)
        #else
        guard let resolved = realpath("/proc/self/fd/\(descriptor)", nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
        #endif
    }

    /// Whether `path`, every link resolved, lies inside `root`, also resolved (the same rule as
    /// `breeze serve`'s).
    static func isInside(_ root: String?, path: String) -> Bool {
        guard let root else { return true }
        guard let resolved = realpath(path, nil) else { return false }
        defer { free(resolved) }
        return String(cString: resolved).utf8.starts(with: (root == "/" ? "/" : root + "/").utf8)
    }

    static func header(_ name: String, in request: HTTPGetRequest) -> String? {
        request.headers.first { HTTPResponseHead.namesMatch($0.name, name) }?.value
    }

    private static func modificationTime(_ status: stat) -> (seconds: Int64, nanoseconds: Int64) {
        #if canImport(Darwin)
        let time = status.st_mtimespec
        #else
        let time = status.st_mtim
        #endif
        return (Int64(time.tv_sec), Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
    }
}

/// A descriptor the body reads while the response is handled, closed when it is done.
private final class OpenFile: Sendable {
    let descriptor: Int32
    init(_ descriptor: Int32) { self.descriptor = descriptor }
    func close() { _ = Foundation.close(descriptor) }
}

extension ResponseBody {
    /// A body with no bytes.
    static var empty: ResponseBody { ResponseBody { nil } }
}
