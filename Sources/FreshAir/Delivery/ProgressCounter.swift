import Foundation
import Synchronization

/// Aggregates byte and file progress from concurrent downloads into throttled events.
final class ProgressCounter: Sendable {
    private struct State {
        var files = 0
        var bytes: Int64 = 0
        var lastReport: Duration
        var reportedBytes: Int64 = 0
    }

    private let state: Mutex<State>
    private let uptime: @Sendable () -> Duration
    private let filesTotal: Int
    private let bytesExpected: Int64?
    private let report: @Sendable (SyncEvent) -> Void

    /// `uptime` is the run's monotonic clock (``SyncEnvironment/uptime``), which paces reports.
    init(
        filesTotal: Int,
        bytesExpected: Int64?,
        uptime: @escaping @Sendable () -> Duration,
        report: @escaping @Sendable (SyncEvent) -> Void
    ) {
        state = Mutex(State(lastReport: uptime()))
        self.uptime = uptime
        self.filesTotal = filesTotal
        self.bytesExpected = bytesExpected
        self.report = report
    }

    func add(bytes: Int64) { emit(force: false) { $0.bytes += bytes } }

    /// Counts `count` more files done and returns how many are done in all, counted with this
    /// call's own (concurrent calls each see their own total).
    @discardableResult
    func completeFiles(_ count: Int) -> Int {
        let done = emit(force: false) { $0.files += count }
        if done == filesTotal { emit(force: true) { _ in } }
        return done
    }

    /// Applies `change` and reports progress when it is due (or `force`d); returns the files
    /// done after the change.
    @discardableResult
    private func emit(force: Bool, _ change: (inout State) -> Void) -> Int {
        let (event, files): (SyncProgress?, Int) = state.withLock { state in
            change(&state)
            let now = uptime()
            // Every 100 ms, and also at the first bytes and every 1% of the total: a download that
            // stalls in its first 100 ms still shows how far it got.
            let step = max((bytesExpected ?? 0) / 100, 64 << 10)
            let due =
                now - state.lastReport > .milliseconds(100)
                || (state.reportedBytes == 0 && state.bytes > 0) || state.bytes - state.reportedBytes >= step
            guard force || due else { return (nil, state.files) }
            state.lastReport = now
            state.reportedBytes = state.bytes
            let progress = SyncProgress(
                filesCompleted: state.files,
                filesTotal: filesTotal,
                bytesReceived: state.bytes,
                bytesExpected: bytesExpected
            )
            return (progress, state.files)
        }
        if let event { report(.progress(event)) }
        return files
    }
}
