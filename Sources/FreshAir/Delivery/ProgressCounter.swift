import Foundation
import Synchronization

/// Aggregates byte and file progress from concurrent downloads into throttled events.
final class ProgressCounter: Sendable {
    private struct State {
        var files = 0
        var bytes: Int64 = 0
        var lastReport = ContinuousClock.now
    }

    private let state = Mutex(State())
    private let filesTotal: Int
    private let bytesExpected: Int64?
    private let report: @Sendable (SyncEvent) -> Void

    init(filesTotal: Int, bytesExpected: Int64?, report: @escaping @Sendable (SyncEvent) -> Void) {
        self.filesTotal = filesTotal
        self.bytesExpected = bytesExpected
        self.report = report
    }

    func add(bytes: Int64) { emit(force: false) { $0.bytes += bytes } }
    func completeFiles(_ count: Int) {
        emit(force: false) { $0.files += count }
        if state.withLock({ $0.files == filesTotal }) { emit(force: true) { _ in } }
    }

    private func emit(force: Bool, _ change: (inout State) -> Void) {
        let event: SyncProgress? = state.withLock { state in
            change(&state)
            let now = ContinuousClock.now
            guard force || now - state.lastReport > .milliseconds(100) else { return nil }
            state.lastReport = now
            return SyncProgress(
                filesCompleted: state.files,
                filesTotal: filesTotal,
                bytesReceived: state.bytes,
                bytesExpected: bytesExpected
            )
        }
        if let event { report(.progress(event)) }
    }
}
