import Foundation
import FreshAir
import Synchronization

/// How far an upload is: files and bytes done of those planned.
package struct TransferProgress: Sendable, Equatable {
    package var filesDone: Int
    package var filesTotal: Int
    package var bytesDone: Int64
    package var bytesTotal: Int64

    package init(filesDone: Int, filesTotal: Int, bytesDone: Int64, bytesTotal: Int64) {
        self.filesDone = filesDone
        self.filesTotal = filesTotal
        self.bytesDone = bytesDone
        self.bytesTotal = bytesTotal
    }

    /// The rate so far and the time left at that rate, as a person reads them
    /// (`4.2 MB/s, about 12 s left`); `nil` before a rate can be told (under half a second, or
    /// no bytes yet). A decision with no clock of its own: the caller says how long it has been.
    package static func estimate(done: Int64, total: Int64, elapsed: Duration) -> String? {
        let seconds = elapsed.seconds
        guard seconds >= 0.5, done > 0 else { return nil }
        let rate = Double(done) / seconds
        let left = max(0, Double(total - done)) / rate
        let eta =
            done >= total
            ? "done"
            : left < 60
                ? "about \(max(1, Int(left.rounded()))) s left"
                : left < 3600
                    ? "about \(Int((left / 60).rounded())) min left"
                    : "about \(Int((left / 3600).rounded())) h left"
        return "\(ByteCount(Int64(rate)))/s, \(eta)"
    }
}

/// Counts uploads that finish in any order and reports each new total.
final class UploadCounter: Sendable {
    private let state: Mutex<TransferProgress>
    private let report: @Sendable (TransferProgress) -> Void

    init(files: Int, bytes: Int64, report: @escaping @Sendable (TransferProgress) -> Void) {
        state = Mutex(TransferProgress(filesDone: 0, filesTotal: files, bytesDone: 0, bytesTotal: bytes))
        self.report = report
    }

    func finished(bytes: Int64) {
        let now = state.withLock { progress in
            progress.filesDone += 1
            progress.bytesDone += bytes
            return progress
        }
        report(now)
    }
}
