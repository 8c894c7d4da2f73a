import Foundation

/// What an update reports while it runs, in every delivery mode, in order: ``checking(_:)``,
/// then ``notModified`` or nothing, ``planned(_:)`` (bundles), any number of ``progress(_:)``
/// (bytes as they arrive) and ``downloaded(path:bytes:)`` (a bundle's file, a package, a
/// repository's bundle), ``activated(version:)`` when a new version went live (bundles and
/// packages), and ``finished(_:)`` last.
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
    /// The update is over; the same summary ``ContentUpdater/run(reporting:)`` returns.
    case finished(SyncSummary)
}

/// The counts a plan comes to.
public struct SyncPlanSummary: Sendable, Hashable {
    /// Files that will be downloaded.
    public var filesToDownload: Int
    /// Files carried over from the live version.
    public var filesToKeep: Int
    /// Files of the live version the new one will not have.
    public var filesToRemove: Int
    /// Bytes to download, when every file's size is known in advance.
    public var bytesToDownload: Int64?
}

/// How far the downloads have come.
public struct SyncProgress: Sendable, Hashable {
    /// Files downloaded and verified so far.
    public var filesCompleted: Int
    /// Files to download in all.
    public var filesTotal: Int
    /// Body bytes received so far, resumed bytes included.
    public var bytesReceived: Int64
    /// Known when the manifest declares sizes.
    public var bytesExpected: Int64?

    /// 0…1, by bytes when they are known, else by files.
    public var fractionCompleted: Double {
        if let bytesExpected, bytesExpected > 0 { return min(1, Double(bytesReceived) / Double(bytesExpected)) }
        return filesTotal == 0 ? 1 : Double(filesCompleted) / Double(filesTotal)
    }
}

/// `", 1.2 MB wasted on failed attempts"`, or nothing when nothing was.
func wastedNote(_ bytes: Int64) -> String {
    bytes > 0 ? ", \(ByteCount(bytes)) wasted on failed attempts" : ""
}

/// Bytes written the way people read them: `512 B`, `4.2 KB`, `1.1 GB`.
package struct ByteCount: CustomStringConvertible, Sendable {
    /// The count.
    package var bytes: Int64
    /// A count of `bytes`.
    package init(_ bytes: Int64) { self.bytes = bytes }
    package var description: String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : "\(value.fixedPoint(1)) \(units[unit])"
    }
}

extension Double {
    /// The value rounded to `places` decimals (0 to 9), as `%.Nf` writes it, without
    /// `String(format:)`: its C arguments cost the runtime a run of type lookups on first use
    /// (1% of a no-change `breeze sync`, under `perf`).
    package func fixedPoint(_ places: Int) -> String {
        let places = min(max(places, 0), 9)
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let scaled = (abs(self) * Double(scale)).rounded()
        guard isFinite, scaled < 9e18 else { return "\(self)" }
        let units = Int64(scaled)
        let fraction = String(units % scale)
        let sign = self < 0 && units != 0 ? "-" : ""
        guard places > 0 else { return sign + String(units) }
        return sign + String(units / scale) + "." + String(repeating: "0", count: places - fraction.count) + fraction
    }
}
