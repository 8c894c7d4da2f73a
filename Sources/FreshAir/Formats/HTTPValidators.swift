import Foundation

/// What a server said identifies a version of a resource: `ETag` and `Last-Modified`.
///
/// Stored with each live version and sent back as `If-None-Match` / `If-Modified-Since`, so
/// an unchanged resource costs one request and no body.
package struct HTTPValidators: Sendable, Hashable, Codable {
    /// The `ETag`, sent back as `If-None-Match` (and `If-Range`).
    package var etag: String?
    /// The `Last-Modified` date, sent back as `If-Modified-Since` when there is no ETag.
    package var lastModified: String?

    /// Validators as a response gave them.
    package init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// These validators without a `Last-Modified` later than `latest` (one stored before
    /// future dates were ignored is not trusted either).
    func droppingDate(after latest: Date) -> HTTPValidators {
        guard let date = lastModified.flatMap(HTTPDate.parse), date > latest else { return self }
        return HTTPValidators(etag: etag)
    }

    /// Neither validator is known: a request cannot be conditional.
    package var isEmpty: Bool { etag == nil && lastModified == nil }

    /// `If-None-Match` and `If-Modified-Since` for a conditional GET.
    var conditionalHeaders: [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        if let etag { headers.append(("If-None-Match", etag)) }
        if let lastModified { headers.append(("If-Modified-Since", lastModified)) }
        return headers
    }

    /// The value for `If-Range`: a strong ETag, else the date. Weak ETags may not be used.
    var ifRange: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }
}
