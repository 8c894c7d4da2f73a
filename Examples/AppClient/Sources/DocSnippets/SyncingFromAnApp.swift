import Foundation
import FreshAir

enum SyncingFromAnApp {
    static func parts(url: URL, folder: URL) async throws {
        // snippet: parts
        let store = BundleStore(root: folder.appendingPathComponent("Content.store"))  // versions, staging, lock
        let sync = BundleSync(remote: url, store: store, environment: .current())
        print(try await sync.run().oneLine)  // "Updated to version 4: 2 downloaded …"
        let content = ContentBundle(root: store.liveLink, environment: sync.environment)
        // snippet: end
        _ = content
    }

    static func events(content: FreshAirContent) async throws {
        // snippet: events
        for try await event in content.updates() {  // or: let summary = try await content.run()
            if case .progress(let progress) = event { print(progress.fractionCompleted) }
            if case .finished(let summary) = event { print(summary.oneLine) }
        }
        // Many small files? `try await content.run(reporting: { event in … })` hands each event
        // to a plain closure instead of waking a task per event.
        // snippet: end
    }
}
