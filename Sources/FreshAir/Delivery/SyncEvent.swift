public import Foundation

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
