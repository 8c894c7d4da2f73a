import Foundation

/// One run of any delivery mode: the frame the three front doors share.
///
/// ``perform(_:report:)`` holds the run under ``SyncConfiguration/deadline``, takes the store's
/// lock (let go while the run waits on the network, and the run started again when another
/// update changed the store meanwhile), counts requests and wasted bytes through one
/// ``Fetcher``, fills in the summary's cost and reports ``SyncEvent/finished(_:)`` last. A
/// front door supplies only its own steps (``DeliverySource/deliver(_:run:)``).
struct DeliveryRun: Sendable {
    /// Every request of the run goes through it: it counts them and the bytes thrown away.
    let fetcher: Fetcher
    let report: @Sendable (SyncEvent) -> Void
    private let configuration: SyncConfiguration

    /// Runs `source`'s steps with its store's lock and returns their summary, completed with
    /// what the run cost.
    static func perform(
        _ source: some DeliverySource,
        report: @escaping @Sendable (SyncEvent) -> Void
    ) async throws -> SyncSummary {
        let configuration = source.configuration
        let started = configuration.environment.uptime()
        let run = DeliveryRun(
            fetcher: Fetcher(transport: source.transport, configuration: configuration, localRoot: source.localRoot),
            report: report,
            configuration: configuration
        )
        // Every mode's first request goes to the root, once the store is read: its transport may
        // connect meanwhile.
        run.fetcher.transport(for: source.rootURL).connectAhead(to: source.rootURL)
        let store = {
            var store = source.runStore
            store.environment = configuration.environment
            return store
        }()
        // Only what earlier runs left may go to make room: this run's own work is what it resumes.
        let mayMakeRoom = store.hasInterruptedWork()
        var summary = try await withDeadline(
            configuration.deadline,
            url: source.rootURL,
            sleep: configuration.environment.sleep
        ) {
            func attempt() async throws -> SyncSummary {
                try await store.update { update in
                    var summary = try await source.deliver(&update, run: run)
                    // For every mode: the signed release live now, from the record the update holds.
                    if summary.releaseSequence == nil { summary.releaseSequence = update.live?.sequence }
                    return summary
                }
            }
            do {
                return try await attempt()
            } catch let error as FreshAirError where error.isOutOfSpace && mayMakeRoom {
                // Unneeded partials went before this try; what earlier failures set aside goes now.
                guard try await store.dropInterruptedWorkForSpace() else { throw error }
                return try await attempt()
            }
        }
        summary.requests = run.fetcher.requests.value
        summary.bytesWasted = run.fetcher.ledger.wasted
        summary.seconds = (configuration.environment.uptime() - started).seconds
        report(.finished(summary))
        return summary
    }

    /// What a root document's conditional request answered.
    enum RootAnswer: Sendable {
        /// `304`: the copy asked about is current.
        case notModified
        /// The document's bytes, not yet verified (a large one in a file, when the caller let it
        /// spill), and its validators.
        case fetched(FetchedDocument, HTTPValidators)
    }

    /// The keys to verify with, after any rotation the publisher announced (kept in `store`),
    /// and the root document at `url`, asked for with `validators`: network waits, without
    /// the lock. Reports ``SyncEvent/checking(_:)``.
    func keysAndRoot(
        _ update: StoreUpdate,
        url: URL,
        validators: HTTPValidators?,
        limit: Int,
        spill: DocumentSpill? = nil
    ) async throws -> (keys: KeySet?, answer: RootAnswer) {
        try await update.withoutLock {
            let keys = try await currentKeys(update.store)
            report(.checking(url))
            return (keys, try await root(at: url, validators: validators, limit: limit, spill: spill))
        }
    }

    /// The keys to verify with (see ``keysAndRoot(_:url:validators:limit:spill:)``); `nil` when the
    /// app pins none. Call it without the lock.
    func currentKeys(_ store: BundleStore) async throws -> KeySet? {
        try await KeyRotation.currentKeys(
            configuration: configuration,
            statePath: store.keyDocumentPath,
            fetcher: fetcher
        )
    }

    /// A root document, asked for conditionally and held to `limit` bytes.
    func root(
        at url: URL,
        validators: HTTPValidators?,
        limit: Int,
        spill: DocumentSpill? = nil
    ) async throws
        -> RootAnswer
    {
        switch try await fetcher.document(at: url, validators: validators, limit: limit, spill: spill) {
        case .fetched(let data, let received): .fetched(data, received)
        // A document is validated by entity tag or date, but never answered "not newer": that
        // needs its body unread, which only downloads do.
        case .notModified, .notNewer: .notModified
        }
    }
}
