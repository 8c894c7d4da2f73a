import Foundation

/// One update of local content from a static host: what ``BundleSync``, ``PackageUpdater`` and
/// ``Repository`` have in common, so that an app, ``SyncSchedule`` or `breeze sync` runs any of
/// them the same way, with the same events and the same summary.
///
/// ```swift
/// let updaters: [any ContentUpdater] = [bundle, notes, levels]
/// for updater in updaters {
///     let summary = try await updater.run { event in
///         if case .progress(let progress) = event { bar.progress = progress.fractionCompleted }
///     }
///     print(summary.oneLine)
/// }
/// ```
public protocol ContentUpdater: Sendable {
    /// Runs one update, calling `report` with each event as it happens, on whichever task the
    /// update is running then: keep it quick and thread-safe. The last event is
    /// ``SyncEvent/finished(_:)``, with the summary this returns.
    @discardableResult
    func run(reporting report: @escaping @Sendable (SyncEvent) -> Void) async throws -> SyncSummary
}

extension ContentUpdater {
    /// Runs one update and returns what it did.
    @discardableResult
    public func run() async throws -> SyncSummary {
        try await run(reporting: { _ in })
    }

    /// Runs one update, delivering its events as they happen; the last is
    /// ``SyncEvent/finished(_:)``. Ending the iteration early cancels the update.
    public func updates() -> AsyncThrowingStream<SyncEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    try await run(reporting: { continuation.yield($0) })
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

extension SyncSchedule {
    /// Runs `updater` on this schedule and delivers each summary or failure.
    public func runs(_ updater: some ContentUpdater) -> AsyncStream<Result<SyncSummary, any Error>> {
        runs { try await updater.run() }
    }
}
