import Foundation

/// Validators as a response carries them.
extension HTTPValidators {
    init(_ head: HTTPResponseHead) {
        self.init(etag: head["ETag"], lastModified: head["Last-Modified"])
    }

    /// The response's validators, less a `Last-Modified` later than `latest`: a date in the
    /// future would make every later answer look older than what is installed, so a server
    /// could pin its content on a device for ever by sending one.
    init(_ head: HTTPResponseHead, datesNoLaterThan latest: Date) {
        self = HTTPValidators(head).droppingDate(after: latest)
    }
}
