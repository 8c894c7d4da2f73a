import Foundation

/// What a download does with a response's status line and headers: the decision alone, with
/// no I/O, so each rule (a `304`, a range the server would not honour, a file that changed
/// under a resume) is tested without a server.
enum DownloadAnswer: Equatable, Sendable {
    /// `304` to a conditional request: what is stored is current.
    case notModified
    /// `200` to a request validated by date alone, no newer than the stored copy: skip the body.
    case notNewer(serverLastModified: String)
    /// Write the body starting at `offset` of the file (`0`: from its first byte, replacing
    /// whatever partial bytes there are); `total` is the whole file's size, when announced.
    case body(offset: Int64, total: Int64?)
    /// The partial bytes are not a prefix of what the server has now: discard them and fail
    /// with `detail`, so that the retry starts over.
    case startOver(detail: String)
    /// A range came compressed although nobody asked: discard it, and blame the encoding.
    case encodedRange(encoding: String)
    /// Any other status: an HTTP error.
    case refused

    /// Decides what to do with `head`, the answer to a request for `job` that asked to resume
    /// at `offset` (`0`: not resuming) and, when not resuming, carried `validators`.
    static func decide(
        _ head: HTTPResponseHead,
        for job: DownloadJob,
        resumingAt offset: Int64,
        validators: HTTPValidators?
    ) -> DownloadAnswer {
        switch head.status {
        case 304 where job.validators != nil && offset == 0:
            return .notModified
        case 200 where isNoNewerThan(head, validators):
            // Date-only validation against a server that matches If-Modified-Since exactly
            // (nginx's default): its copy is not newer than ours.
            return .notNewer(serverLastModified: head["Last-Modified"] ?? "")
        case 200:
            // A full body: the server ignored the range, or the file changed.
            return .body(offset: 0, total: head.contentLength)
        case 206:
            if let encoding = Fetcher.contentEncoding(head) { return .encodedRange(encoding: encoding) }
            guard let range = ContentRange(head["Content-Range"]), range.start == offset else {
                return .startOver(detail: "the server answered a different range; starting over")
            }
            return .body(offset: offset, total: range.total)
        case 416:
            return .startOver(detail: "range not satisfiable; starting over")
        default:
            return .refused
        }
    }

    /// `true` when we validated by date alone and the response's `Last-Modified` is not
    /// after that date.
    private static func isNoNewerThan(_ head: HTTPResponseHead, _ validators: HTTPValidators?) -> Bool {
        guard let validators, validators.etag == nil, let ours = validators.lastModified.flatMap(HTTPDate.parse),
            let theirs = head["Last-Modified"].flatMap(HTTPDate.parse)
        else { return false }
        return theirs <= ours
    }
}
