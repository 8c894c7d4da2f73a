import Foundation
import Synchronization

/// Counts the requests a sync sends, retries included, for its summary.
final class RequestCounter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// Body bytes a run received and what became of them, for "wasted" in its summary: bytes of
/// an attempt that was cut and could not be resumed, or of a body that failed its check.
final class TransferLedger: Sendable {
    private let state = Mutex((received: Int64(0), used: Int64(0), kept: [String: Int64]()))

    func receive(_ bytes: Int64) { state.withLock { $0.received += bytes } }

    /// A body (or the rest of a resumed one) was used; `resumedFrom` bytes of it were kept
    /// from an earlier attempt of this run, and count as used now.
    func use(_ bytes: Int64, partial: String? = nil, resumedFrom offset: Int64 = 0) {
        state.withLock { state in
            let earlier = partial.flatMap { state.kept.removeValue(forKey: $0) } ?? 0
            state.used += bytes + min(earlier, offset)
        }
    }

    /// A cut attempt left its bytes in `partial` for the next attempt to resume.
    func keep(_ bytes: Int64, in partial: String) { state.withLock { $0.kept[partial, default: 0] += bytes } }

    /// Bytes counted as used that turned out not to be (a chunk index whose delta gave way
    /// to a whole download).
    func discard(_ bytes: Int64) { state.withLock { $0.used -= bytes } }

    /// Bytes received in this run that no installed file is made of.
    var wasted: Int64 { state.withLock { max(0, $0.received - $0.used) } }
}

/// What a conditional fetch found.
enum FetchOutcome<Content: Sendable>: Sendable {
    /// `304`: what is stored is current.
    case notModified
    /// `200` for a request validated by date alone, with a `Last-Modified` no later than the
    /// stored copy's (nginx answers so when the dates differ): the server's copy is not newer,
    /// and its body was not read. Only downloads (packages) are validated this way.
    case notNewer(serverLastModified: String)
    case fetched(Content, HTTPValidators)
}

/// A file to stream to disk.
struct DownloadJob: Sendable {
    /// Named in errors: the bundle path, or the package name.
    var label: String
    var url: URL
    /// Where the bytes go; a partial file left here by an interrupted run is resumed.
    var partialPath: String
    var expectedHash: ContentHash?
    var expectedSize: Int64?
    /// Refuse bodies above this, declared or not.
    var limit: Int64
    /// Makes the request conditional (packages); `nil` for files covered by a manifest hash.
    var validators: HTTPValidators?
    /// Whether ``FetchOutcome/fetched(_:_:)`` carries the answer's validators (a package stores
    /// them for its next request); else it carries none. Files a manifest lists never use
    /// them, and reading them (two lookups and a date parsed, for the check against future
    /// dates) was 3% of the instructions of a 10,000-file sync.
    var returnsValidators = false
    /// Whether an interrupted download may be resumed from `partialPath`. Small files are
    /// written straight to their place in the staged version and simply fetched again.
    var resumable = true
    /// Where a small file is written straight into the version being assembled: created
    /// through the staged folder's descriptor, never by a path the kernel resolves.
    var confined: ConfinedTarget?
    /// The file is unpacked and then deleted (a package): it is hashed only when a digest is
    /// expected, and not pushed to disk ahead of time.
    var isTransient = false
    /// Whether the body is written to `partialPath`; `false` when only the tee needs it (a
    /// bundle's pack, unpacked as it arrives and never read again: on a phone, a second copy of
    /// the small files would take as much space again for the length of the sync).
    var keepsBody = true
    /// What gave ``expectedHash`` and ``expectedSize``, named when the body does not match them.
    var listedIn: FreshAirError.Listing = .manifest
}

/// A file inside a version being assembled.
struct ConfinedTarget: Sendable {
    var folder: ConfinedFolder
    var path: BundlePath
}

/// A file on disk whose digest was computed as it arrived.
struct DownloadedFile: Sendable {
    var path: String
    /// `nil` for a transient file that no manifest gave a digest for.
    var hash: ContentHash?
    var size: Int64
    /// The tee given to the download saw the whole body, from its first byte.
    var teedWholeBody = false
    /// The `Content-Encoding` it came with, which nobody asked for: a package that then fails
    /// to unpack is the server's encoding's fault, not the publisher's.
    var contentEncoding: String?
}

/// Receives a body's bytes as they are written to disk, e.g. to unpack a package while it
/// downloads. ``restart()`` is called whenever a body starts from its first byte (a retry
/// that could not resume); a resumed body is not teed, and the caller falls back to the file.
protocol DownloadTee: AnyObject, Sendable {
    func restart() throws
    func consume(_ bytes: UnsafeRawBufferPointer) throws
    /// Waits until what it was handed is done with (a package's files written); rethrows its
    /// failure. Called whenever the bytes stop, before anyone else touches what it wrote.
    func settle() throws
}

/// The one way FreshAir talks HTTP: conditional requests, retries with back-off, streaming
/// to disk with hashing on the fly, size caps, and resume with `Range`/`If-Range`. All three
/// delivery modes fetch through it.
struct Fetcher: Sendable {
    let transport: any HTTPTransport
    let retry: RetryPolicy
    /// Headers the app adds to every request (authorization, user agent).
    let headers: [(name: String, value: String)]
    let timeout: Duration
    /// Bodies slower than this are abandoned.
    let throughput: ThroughputFloor
    /// How far a `Last-Modified` may lie ahead of this device's clock.
    let clockSkew: Duration
    /// The clocks, sleep and random numbers of the run (retry waits, dates from the future).
    let environment: SyncEnvironment
    let requests = RequestCounter()
    let ledger = TransferLedger()
    /// Reads `file://` URLs, confined to the source's own folder when there is one.
    let local: LocalFileTransport

    /// - Parameter localRoot: for a `file://` source, the folder it lies in; files that links
    ///   take outside it are not read.
    init(transport: any HTTPTransport, configuration: SyncConfiguration, localRoot: URL? = nil) {
        self.transport = transport
        local = localRoot.map { LocalFileTransport(confinedTo: $0) } ?? LocalFileTransport()
        retry = configuration.retry
        // Digests are of the bytes as published: ask that nobody compress them on the way.
        let asksEncoding = configuration.headers.contains { HTTPResponseHead.namesMatch($0.name, "Accept-Encoding") }
        // Every request names FreshAir, after the app's own product when it gives one.
        let isAgent = { (header: (name: String, value: String)) in
            HTTPResponseHead.namesMatch(header.name, "User-Agent")
        }
        let agent = FreshAirVersion.userAgent(after: configuration.headers.last(where: isAgent)?.value)
        headers =
            configuration.headers.filter { !isAgent($0) } + [("User-Agent", agent)]
            + (asksEncoding ? [] : [("Accept-Encoding", "identity")])
        timeout = configuration.requestTimeout
        throughput = configuration.minimumThroughput
        clockSkew = configuration.clockSkewTolerance
        environment = configuration.environment
    }

    /// `file://` URLs are read from disk (a local folder or archive as a source); every
    /// other URL goes through the sync's transport.
    func transport(for url: URL) -> any HTTPTransport {
        url.isFileURL ? local : transport
    }

    /// A response's validators, less a date from the future.
    func validators(_ head: HTTPResponseHead) -> HTTPValidators {
        HTTPValidators(head, datesNoLaterThan: latestAcceptableDate)
    }

    /// The latest `Last-Modified` believed: now, plus the tolerated clock skew.
    var latestAcceptableDate: Date { environment.now().addingTimeInterval(clockSkew.seconds) }

    /// Bodies at least this large are hashed on a thread of their own.
    static let backgroundHashingSize: Int64 = 8 << 20

    /// Bodies smaller than this restart instead of resuming: not worth a side file.
    static let resumableSize: Int64 = 256 * 1024

    /// Fetches a small document (a manifest, an index) into memory.
    func document(at url: URL, validators: HTTPValidators?, limit: Int) async throws -> FetchOutcome<Data> {
        switch try await document(at: url, validators: validators, limit: limit, spill: nil) {
        case .fetched(let document, let received): .fetched(try document.bytes(), received)
        case .notModified: .notModified
        case .notNewer(let date): .notNewer(serverLastModified: date)
        }
    }

    /// Fetches a document into memory, or into `spill`'s file once it is that large (a root
    /// manifest of many thousand entries).
    func document(
        at url: URL,
        validators: HTTPValidators?,
        limit: Int,
        spill: DocumentSpill?
    ) async throws -> FetchOutcome<FetchedDocument> {
        try await retry.run(in: environment) { _ in
            requests.increment()
            var request = HTTPGetRequest(url: url, headers: headers, timeout: timeout)
            request.headers += validators?.droppingDate(after: latestAcceptableDate).conditionalHeaders ?? []
            do {
                return try await transport(for: url).get(request) { head, body in
                    let body = body.enforcing(throughput, url: url, uptime: environment.uptime).counted(by: ledger)
                    switch head.status {
                    case 304 where validators != nil: return .notModified
                    case 200:
                        if let length = head.contentLength, length > limit {
                            throw FreshAirError.bodyTooLarge(url: url, limit: Int64(limit))
                        }
                        if let encoding = Self.contentEncoding(head) {
                            throw FreshAirError.unrequestedEncoding(url: url, encoding: encoding)
                        }
                        do {
                            let document = try await body.collect(
                                upTo: limit,
                                announced: head.contentLength,
                                spill: spill
                            )
                            let size = document.size
                            if let length = head.contentLength, size != length {
                                document.discard()
                                throw FreshAirError.transport(
                                    TransportError(
                                        kind: .interrupted,
                                        url: url,
                                        detail: "received \(size) of the \(length) bytes the server announced"
                                    )
                                )
                            }
                            ledger.use(size)
                            return .fetched(document, self.validators(head))
                        } catch is ResponseBody.BodyTooLarge {
                            throw FreshAirError.bodyTooLarge(url: url, limit: Int64(limit))
                        }
                    default:
                        throw StatusFailure(head, url: url)
                    }
                }
            } catch let error as TransportError {
                throw FreshAirError.transport(error)
            }
        }
    }

    /// Streams a file to `job.partialPath`, verifying size and hash, resuming what an
    /// earlier attempt left.
    ///
    /// On a hash mismatch the partial file is deleted, so the next attempt starts clean.
    func download(
        _ job: DownloadJob,
        tee: (any DownloadTee)? = nil,
        progress: @Sendable (Int64) -> Void
    ) async throws -> FetchOutcome<DownloadedFile> {
        let sidecar: String? = job.resumable ? job.partialPath + ".resume" : nil
        // A small file written straight into staging has no side file: a retry within this call
        // resumes what the attempt before it kept, from memory.
        let kept = KeptResumption()
        return try await retry.run(in: environment) { _ in
            requests.increment()
            var request = HTTPGetRequest(
                url: job.url,
                headers: headers,
                timeout: timeout,
                expectedBodySize: job.expectedSize
            )
            var offset: Int64 = 0
            let inMemory = kept.take()
            if let sidecar, let resume = ResumePoint.load(sidecar), resume.url == job.url.absoluteString,
                let size = Disk.status(job.partialPath)?.size, size > 0
            {
                offset = size
                request.headers += [("Range", "bytes=\(size)-"), ("If-Range", resume.ifRange)]
            } else if job.confined != nil, let resume = inMemory, let size = resume.size, size > 0 {
                offset = size
                request.headers += [("Range", "bytes=\(size)-"), ("If-Range", resume.ifRange)]
            } else {
                if job.resumable { try Disk.remove(job.partialPath) }  // else truncated when opened
                request.headers += job.validators?.droppingDate(after: latestAcceptableDate).conditionalHeaders ?? []
            }
            do {
                return try await transport(for: job.url).get(request) { head, body in
                    try await receive(
                        job,
                        head: head,
                        body: body.enforcing(throughput, url: job.url, uptime: environment.uptime).counted(by: ledger),
                        offset: offset,
                        sidecar: sidecar,
                        kept: kept,
                        tee: tee,
                        progress: progress
                    )
                }
            } catch let error as TransportError {
                throw FreshAirError.transport(error)
            }
        }
    }

    /// Takes the answer to one attempt: decides what it is (``DownloadAnswer``), then streams
    /// the body to disk and checks it, keeping what a cut attempt received for the next.
    private func receive(
        _ job: DownloadJob,
        head: HTTPResponseHead,
        body: ResponseBody,
        offset requestedOffset: Int64,
        sidecar: String?,
        kept: KeptResumption,
        tee: (any DownloadTee)?,
        progress: @Sendable (Int64) -> Void
    ) async throws -> FetchOutcome<DownloadedFile> {
        // Bytes nobody asked to be encoded are not the published file's: never resumed, never
        // kept, and a failed check then blames the encoding, not the publisher.
        let encoding = Self.contentEncoding(head)
        let validators = job.validators?.droppingDate(after: latestAcceptableDate)
        let offset: Int64
        let total: Int64?
        switch DownloadAnswer.decide(head, for: job, resumingAt: requestedOffset, validators: validators) {
        case .notModified: return .notModified
        case .notNewer(let date): return .notNewer(serverLastModified: date)
        case .body(let start, let size): (offset, total) = (start, size)
        case .startOver(let detail):
            try discard(job, sidecar: sidecar)
            throw FreshAirError.transport(TransportError(kind: .interrupted, url: job.url, detail: detail))
        case .encodedRange(let encoding):
            try discard(job, sidecar: sidecar)
            throw FreshAirError.unrequestedEncoding(url: job.url, encoding: encoding)
        case .refused: throw StatusFailure(head, url: job.url)
        }
        try Self.checkAnnounced(total, of: job, encoding: encoding)

        let (file, hasher) = try await open(job, head: head, offset: offset, total: total, sidecar: sidecar)
        defer { file.close() }
        if offset > 0 { progress(offset) }
        let teeing = offset == 0 ? tee : nil
        try teeing?.restart()
        // Written, hashed and teed on the blocking pool while this task reads the next chunk;
        // a large body is hashed on another core than the one writing it.
        let sink = BodySink(
            file: file,
            writesFile: job.keepsBody || teeing == nil,
            hasher: hasher,
            tee: teeing,
            hashingApart: (total ?? 0) >= Self.backgroundHashingSize
        )
        var received = offset
        let digest: ContentHash?
        do {
            digest = try await stream(
                body,
                of: job,
                into: sink,
                total: total,
                sidecar: sidecar,
                received: &received,
                progress: progress
            )
            try check(job, received: received, total: total, digest: digest, sidecar: sidecar)
        } catch let error as FreshAirError where encoding != nil && error.isContentCheckFailure {
            try discard(job, sidecar: sidecar)
            throw FreshAirError.unrequestedEncoding(url: job.url, encoding: encoding!)
        } catch  where Self.isInterruption(error) {
            keepCut(job, received: received, offset: offset, head: head, sidecar: sidecar, kept: kept)
            throw error
        }
        ledger.use(received - offset, partial: job.partialPath, resumedFrom: offset)
        if let sidecar { try Disk.remove(sidecar) }
        return .fetched(
            DownloadedFile(
                path: job.partialPath,
                hash: digest,
                size: received,
                teedWholeBody: teeing != nil,
                contentEncoding: encoding
            ),
            job.returnsValidators ? self.validators(head) : HTTPValidators()
        )
    }

    /// Cut short: what arrived stays for the next attempt to resume (on disk beside its resume
    /// point, or in memory for a small file written into staging), else it is counted wasted.
    private func keepCut(
        _ job: DownloadJob,
        received: Int64,
        offset: Int64,
        head: HTTPResponseHead,
        sidecar: String?,
        kept: KeptResumption
    ) {
        if let sidecar, Disk.exists(sidecar) {
            ledger.keep(received - offset, in: job.partialPath)
        } else if job.confined != nil, Self.contentEncoding(head) == nil, received > 0,
            let ifRange = validators(head).ifRange
        {  // a 206 carries the validator it was asked for
            kept.keep(ResumePoint(url: job.url.absoluteString, ifRange: ifRange, size: received))
            ledger.keep(received - offset, in: job.partialPath)
        }
    }

    /// Refuses a body whose announced size is not the listed one, or is over the limit.
    private static func checkAnnounced(_ total: Int64?, of job: DownloadJob, encoding: String?) throws {
        guard let total else { return }
        if let expected = job.expectedSize, total != expected {
            if let encoding { throw FreshAirError.unrequestedEncoding(url: job.url, encoding: encoding) }
            throw FreshAirError.declaredSizeMismatch(
                path: job.label,
                url: job.url,
                expected: expected,
                declared: total,
                listedIn: job.listedIn
            )
        }
        if total > job.limit { throw FreshAirError.bodyTooLarge(url: job.url, limit: job.limit) }
    }

    /// Opens the file a body goes to, and the digest it continues. A resumed body appends, and
    /// its digest first covers the bytes already on disk; a body from the first byte replaces
    /// the file, and leaves a resume point beside it when it is large enough to resume.
    private func open(
        _ job: DownloadJob,
        head: HTTPResponseHead,
        offset: Int64,
        total: Int64?,
        sidecar: String?
    ) async throws -> (OutputFile, ContentHasher?) {
        let hashes = job.expectedHash != nil || !job.isTransient
        var hasher = ContentHasher(job.expectedHash?.algorithm ?? .sha256)
        let writesBack = !job.isTransient
        let file: OutputFile
        if offset > 0 {
            if hashes {
                hasher = try await BlockingPool.run { [hasher, path = job.partialPath] in
                    var hasher = hasher
                    _ = try Disk.hash(path, into: &hasher)
                    return hasher
                }
            }
            file =
                try job.confined.map { try $0.folder.appendToFile($0.path, startsWriteback: writesBack) }
                ?? OutputFile(path: job.partialPath, append: true, startsWriteback: writesBack)
        } else {
            file =
                try job.confined.map { try $0.folder.createFile($0.path, replacing: true, startsWriteback: writesBack) }
                ?? OutputFile(path: job.partialPath, append: false, startsWriteback: writesBack)
            if let sidecar {
                if Self.contentEncoding(head) == nil, let ifRange = validators(head).ifRange,
                    (total ?? Self.resumableSize) >= Self.resumableSize
                {
                    try ResumePoint(url: job.url.absoluteString, ifRange: ifRange).save(sidecar)
                } else {
                    try Disk.remove(sidecar)  // an earlier attempt's, for bytes this body replaces
                }
            }
        }
        // Blocks chosen up front for a large body (Linux): a 1 GB sync 1.254 -> 1.169 s. Only
        // for a size a manifest lists: a server's own Content-Length could hold a device's
        // disk with blocks past the end of a body it then cuts short.
        if writesBack, let total, total == job.expectedSize, total - offset >= Self.backgroundHashingSize {
            file.reserve(total - offset)
        }
        if job.url.isFileURL, let mode = LocalFileTransport.installedMode(head[LocalFileTransport.modeHeader]) {
            file.setMode(mode)  // never readable by more users than the source file is
        }
        return (file, hashes ? hasher : nil)
    }

    /// Streams `body` into `sink`, counting into `received` as it goes (also when it throws),
    /// and returns the digest of the whole file. Refuses bytes past what was announced.
    private func stream(
        _ body: ResponseBody,
        of job: DownloadJob,
        into sink: BodySink,
        total: Int64?,
        sidecar: String?,
        received: inout Int64,
        progress: @Sendable (Int64) -> Void
    ) async throws -> ContentHash? {
        let ceiling = total ?? job.expectedSize ?? job.limit
        do {
            for try await chunk in body {
                let count = Int64(chunk.count)
                if received + count > ceiling {
                    try await sink.settle()
                    try discard(job, sidecar: sidecar)
                    if total == nil, job.expectedSize == nil {
                        throw FreshAirError.bodyTooLarge(url: job.url, limit: job.limit)
                    }
                    throw FreshAirError.sizeMismatch(
                        path: job.label,
                        url: job.url,
                        expected: ceiling,
                        actual: received + count,
                        listedIn: job.listedIn
                    )
                }
                try await sink.write(chunk)
                received += count
                progress(count)
            }
            return try await sink.finish()
        } catch {
            // Nothing may still be writing when the file is closed, kept or removed. A chunk
            // that already failed (a tee's check, a full disk) says more than how the
            // connection ended: the bytes were wrong, so resuming them would not help.
            let interrupted = Self.isInterruption(error)
            do { try await sink.settle() } catch let failure { if interrupted { throw failure } }
            throw error
        }
    }

    /// Checks a body that ended: all of it arrived (else the partial file stays, for the retry
    /// to resume), and its digest is the listed one (else it goes).
    private func check(
        _ job: DownloadJob,
        received: Int64,
        total: Int64?,
        digest: ContentHash?,
        sidecar: String?
    ) throws {
        if let expected = total ?? job.expectedSize, received != expected {
            throw FreshAirError.transport(
                TransportError(kind: .interrupted, url: job.url, detail: "received \(received) of \(expected) bytes")
            )
        }
        if let expected = job.expectedHash, let digest, expected != digest {
            try discard(job, sidecar: sidecar)
            throw FreshAirError.hashMismatch(
                path: job.label,
                url: job.url,
                expected: expected,
                actual: digest,
                listedIn: job.listedIn
            )
        }
    }

    /// A body cut on the way (the connection, a timeout), as opposed to one that arrived wrong.
    static func isInterruption(_ error: any Error) -> Bool {
        if error is TransportError { return true }
        if (error as? FreshAirError)?.code == .transport { return true }
        return false
    }

    /// The response's `Content-Encoding`, unless absent or `identity`.
    static func contentEncoding(_ head: HTTPResponseHead) -> String? {
        guard let value = head["Content-Encoding"]?.trimmingCharacters(in: .whitespaces), !value.isEmpty,
            value.lowercased() != "identity"
        else { return nil }
        return value
    }

    private func discard(_ job: DownloadJob, sidecar: String?) throws {
        if let confined = job.confined {
            try confined.folder.remove(confined.path)
        } else {
            try Disk.remove(job.partialPath)
        }
        if let sidecar { try Disk.remove(sidecar) }
    }
}

/// What an attempt at a small download kept for the next attempt of the same call to resume.
final class KeptResumption: Sendable {
    private let point = Mutex<ResumePoint?>(nil)

    /// The point, once: an attempt that does not keep bytes again leaves none.
    func take() -> ResumePoint? {
        point.withLock { point in
            defer { point = nil }
            return point
        }
    }
    func keep(_ resume: ResumePoint) { point.withLock { $0 = resume } }
}

/// What a partial download needs to resume safely: the URL and the `If-Range` validator
/// of the response it came from (and, for one kept in memory, how many bytes it has).
struct ResumePoint: Codable, Sendable {
    var url: String
    var ifRange: String
    var size: Int64?

    static func load(_ path: String) -> ResumePoint? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONDecoder().decode(ResumePoint.self, from: data)
    }

    func save(_ path: String) throws {
        try Disk.writeAtomically(try JSONEncoder().encode(self), to: path)
    }
}

/// `Content-Range: bytes 100-199/200`.
struct ContentRange {
    var start: Int64
    /// The last byte's offset, when the header gives a valid one.
    var end: Int64?
    var total: Int64?

    init?(_ header: String?) {
        guard let header, header.hasPrefix("bytes ") else { return nil }
        let spec = header.dropFirst(6)
        let parts = spec.split(separator: "/", maxSplits: 1)
        guard parts.count == 2, let dash = parts[0].firstIndex(of: "-"), let start = Int64(parts[0][..<dash]) else {
            return nil
        }
        self.start = start
        self.end = Int64(parts[0][parts[0].index(after: dash)...]).flatMap { $0 >= start ? $0 : nil }
        self.total = Int64(parts[1])
    }
}

extension ResponseBody {
    /// The body, each chunk counted as received in `ledger`.
    func counted(by ledger: TransferLedger) -> ResponseBody {
        var iterator = makeAsyncIterator()
        return ResponseBody {
            guard let chunk = try await iterator.next() else { return nil }
            ledger.receive(Int64(chunk.count))
            return chunk
        }
    }
}
