import Foundation

/// Runs `updater` off the main actor and hands `phase` each phase it moves to, on the main
/// actor: only the newest, however fast files arrive. Cancelling the caller cancels the
/// update. What ``ContentModel`` and ``RepositoryModel`` share.
@MainActor
func observedUpdate(
    of updater: some ContentUpdater,
    phase: (ContentModel.Phase) -> Void
) async -> Result<SyncSummary, any Error> {
    let (phases, continuation) = AsyncStream.makeStream(
        of: ContentModel.Phase.self,
        bufferingPolicy: .bufferingNewest(1)
    )
    let update = Task.detached {
        defer { continuation.finish() }
        return try await updater.run { event in
            if let next = ContentModel.phase(after: event) { continuation.yield(next) }
        }
    }
    for await next in phases { phase(next) }
    do {
        return .success(
            try await withTaskCancellationHandler {
                try await update.value
            } onCancel: {
                update.cancel()
            }
        )
    } catch {
        return .failure(error)
    }
}
