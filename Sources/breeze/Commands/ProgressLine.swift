import BreezeKit
import Foundation
import FreshAir

/// A one-line progress bar on standard error, redrawn in place; silent when standard error
/// is not a terminal, so logs and pipes stay clean.
/// Unchecked `Sendable`: `drawn` and the terminal are touched only with `lock` held.
final class ProgressLine: @unchecked Sendable {
    private let enabled: Bool
    private let lock = NSLock()
    private var drawn = false
    private let started = ContinuousClock.now

    init(enabled: Bool) { self.enabled = enabled }

    static var isTerminal: Bool { isatty(STDERR_FILENO) != 0 }

    func show(_ event: SyncEvent) {
        guard enabled else { return }
        let line: String? =
            switch event {
            case .checking(let url): "Checking \(url.absoluteString)"
            case .planned(let plan):
                "Planned: \(plan.filesToDownload) to download, \(plan.filesToKeep) unchanged, \(plan.filesToRemove) to remove"
            case .progress(let progress): bar(progress)
            default: nil
            }
        guard let line else { return }
        draw(line)
    }

    /// An upload's progress (publish, release): files, bytes, rate and time left.
    func show(_ progress: TransferProgress) {
        guard enabled else { return }
        let fraction = progress.bytesTotal > 0 ? Double(progress.bytesDone) / Double(progress.bytesTotal) : 1
        let rate = TransferProgress.estimate(
            done: progress.bytesDone,
            total: progress.bytesTotal,
            elapsed: ContinuousClock.now - started
        )
        draw(
            "\(Self.bar(fraction)) \(progress.filesDone)/\(progress.filesTotal) files, "
                + "\(ByteCount(progress.bytesDone)) of \(ByteCount(progress.bytesTotal))"
                + (rate.map { ", \($0)" } ?? "")
        )
    }

    private func draw(_ line: String) {
        lock.withLock {
            FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
            drawn = true
        }
    }

    func clear() {
        lock.withLock {
            if drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            drawn = false
        }
    }

    private func bar(_ progress: SyncProgress) -> String {
        let expected = progress.bytesExpected.map { " of \(ByteCount($0))" } ?? ""
        let rate = progress.bytesExpected.flatMap {
            TransferProgress.estimate(done: progress.bytesReceived, total: $0, elapsed: ContinuousClock.now - started)
        }
        return "\(Self.bar(progress.fractionCompleted)) \(progress.filesCompleted)/\(progress.filesTotal) files, "
            + "\(ByteCount(progress.bytesReceived))\(expected)" + (rate.map { ", \($0)" } ?? "")
    }

    private static func bar(_ fraction: Double) -> String {
        let width = 30
        let filled = min(width, max(0, Int(fraction * Double(width))))
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
    }
}
