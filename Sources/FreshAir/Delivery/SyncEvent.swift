import Foundation

/// What a sync reports while it runs, in order: ``checking(_:)``, then ``notModified`` or
/// nothing, ``planned(_:)``, any number of ``progress(_:)`` and ``downloaded(path:bytes:)``,
/// ``activated(version:)`` when a new version went live, and ``finished(_:)`` last.
public enum SyncEvent: Sendable {
    /// The root document is being requested.
    case checking(URL)
    /// The server answered `304 Not Modified`: the stored tree is current.
    case notModified
    /// What the sync will do.
    case planned(SyncPlanSummary)
    /// Overall progress of the downloads.
    case progress(SyncProgress)
    /// One file arrived and was verified.
    case downloaded(path: String, bytes: Int64)
    /// A new version is live.
    case activated(version: Int)
    /// The sync is over; the same summary ``BundleSync/run()`` returns.
    case finished(SyncSummary)
}

/// The counts a plan comes to.
public struct SyncPlanSummary: Sendable, Hashable {
    public var filesToDownload: Int
    public var filesToKeep: Int
    public var filesToRemove: Int
    /// Bytes to download, when every file's size is known in advance.
    public var bytesToDownload: Int64?
}

/// How far the downloads have come.
public struct SyncProgress: Sendable, Hashable {
    public var filesCompleted: Int
    public var filesTotal: Int
    public var bytesReceived: Int64
    /// Known when the manifest declares sizes.
    public var bytesExpected: Int64?

    /// 0…1, by bytes when they are known, else by files.
    public var fractionCompleted: Double {
        if let bytesExpected, bytesExpected > 0 { return min(1, Double(bytesReceived) / Double(bytesExpected)) }
        return filesTotal == 0 ? 1 : Double(filesCompleted) / Double(filesTotal)
    }
}

/// What one sync did.
public struct SyncSummary: Sendable, Hashable, Codable {
    public enum Outcome: String, Sendable, Codable {
        /// A new version went live.
        case updated
        /// Nothing changed for this device.
        case alreadyCurrent
        /// The server still offers only the content this device rolled back from
        /// (``BundleStore/rollBackIfUnconfirmed(allowedLaunches:)``); the live version stays
        /// until something new is published.
        case keptAfterRollback
    }

    public var outcome: Outcome
    /// The live version afterwards.
    public var version: Int?
    /// The root document came back `304 Not Modified`.
    public var notModified: Bool
    public var filesDownloaded: Int
    public var bytesDownloaded: Int64
    /// Files carried over from the previous version without a download.
    public var filesReused: Int
    public var filesRemoved: Int
    /// HTTP requests sent, retries included.
    public var requests: Int
    /// Body bytes received and thrown away: attempts cut and not resumable, bodies that failed
    /// their check. Zero on a clean network.
    public var bytesWasted: Int64 = 0
    public var seconds: Double
    /// The paths downloaded, in the order they completed.
    public var downloaded: [String]
    /// The paths no longer present.
    public var removed: [String]

    /// A sync that installed nothing (yet): the live version stays, its files reused.
    static func nothingInstalled(_ outcome: Outcome, version: Int?, notModified: Bool, reused: Int) -> SyncSummary {
        SyncSummary(
            outcome: outcome,
            version: version,
            notModified: notModified,
            filesDownloaded: 0,
            bytesDownloaded: 0,
            filesReused: reused,
            filesRemoved: 0,
            requests: 0,
            seconds: 0,
            downloaded: [],
            removed: []
        )
    }

    /// One line for a terminal: what moved and what it cost.
    public var oneLine: String {
        let time = String(format: "%.2fs", seconds) + wastedNote(bytesWasted)
        switch outcome {
        case .alreadyCurrent:
            let how = notModified ? "304 Not Modified" : "no file changed"
            return "Already current (\(how)); \(requests) request\(requests == 1 ? "" : "s"), \(time)."
        case .keptAfterRollback:
            return
                "Kept version \(version ?? 0): the server still offers the content rolled back from; \(requests) request\(requests == 1 ? "" : "s"), \(time)."
        case .updated:
            return "Updated to version \(version ?? 0): \(filesDownloaded) downloaded (\(ByteCount(bytesDownloaded))), "
                + "\(filesReused) reused, \(filesRemoved) removed; \(requests) request\(requests == 1 ? "" : "s"), \(time)."
        }
    }
}

/// `", 1.2 MB wasted on failed attempts"`, or nothing when nothing was.
func wastedNote(_ bytes: Int64) -> String {
    bytes > 0 ? ", \(ByteCount(bytes)) wasted on failed attempts" : ""
}

/// Bytes written the way people read them: `512 B`, `4.2 KB`, `1.1 GB`.
public struct ByteCount: CustomStringConvertible, Sendable {
    public var bytes: Int64
    public init(_ bytes: Int64) { self.bytes = bytes }
    public var description: String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }
}
