import Foundation
import FreshAir

/// A one-line progress bar on standard error, redrawn in place; silent when standard error
/// is not a terminal, so logs and pipes stay clean.
final class ProgressLine: @unchecked Sendable {
    private let enabled: Bool
    private let lock = NSLock()
    private var drawn = false

    init(enabled: Bool) { self.enabled = enabled }

    static var isTerminal: Bool { isatty(STDERR_FILENO) != 0 }

    func show(_ event: SyncEvent) {
        guard enabled else { return }
        let line: String? =
            switch event {
            case .checking(let url): "Checking \(url.absoluteString)"
            case .planned(let plan):
                "Planned: \(plan.filesToDownload) to download, \(plan.filesToKeep) unchanged, \(plan.filesToRemove) to remove"
            case .progress(let progress): Self.bar(progress)
            default: nil
            }
        guard let line else { return }
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

    private static func bar(_ progress: SyncProgress) -> String {
        let width = 30
        let filled = Int(progress.fractionCompleted * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let expected = progress.bytesExpected.map { " of \(ByteCount($0))" } ?? ""
        return
            "[\(bar)] \(progress.filesCompleted)/\(progress.filesTotal) files, \(ByteCount(progress.bytesReceived))\(expected)"
    }
}
