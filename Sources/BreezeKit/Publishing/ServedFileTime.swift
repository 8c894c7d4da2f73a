import Foundation

/// Web servers derive `ETag` and `Last-Modified` from a file's modification time, to the
/// second (nginx: `"<mtime>-<size>"`). A document rewritten within the same second at the same
/// size would keep its validators, and every device would be told `304`: so whatever publishes
/// a file that devices check conditionally moves its time strictly past the one it replaces.
enum ServedFileTime {
    /// Now, or one second after `previous` when that is not earlier (same second, clock skew).
    static func next(after previous: Date?) -> Date {
        let now = Date().timeIntervalSince1970.rounded(.down)
        guard let previous else { return Date(timeIntervalSince1970: now) }
        return Date(timeIntervalSince1970: max(now, previous.timeIntervalSince1970.rounded(.down) + 1))
    }

    /// The modification time of the file at `url`, if there is one.
    static func modified(_ url: URL) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date
    }

    /// Gives the file at `url` a time past `previous`.
    static func moveForward(_ url: URL, past previous: Date?) throws {
        try FileManager.default.setAttributes([.modificationDate: next(after: previous)], ofItemAtPath: url.path)
    }
}
