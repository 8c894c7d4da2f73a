import Foundation
import FreshAir

// The Swift snippets of the DocC articles, each between `// snippet: NAME` and
// `// snippet: end`. scripts/check-readme checks that every article shows its region as it is
// here; this target is built by scripts/check-consumer, so a snippet that drifts from the API
// fails CI. The functions are never called: their parameters stand for what an app has.

enum Overview {
    static func launch() async throws {
        // snippet: overview
        let content = FreshAirContent(remote: URL(string: "https://cdn.example.com/App.freshair/")!)
        try await content.run()  // the bundled copy on a first launch; then one request, no body, when nothing changed
        let title = content.live.localizedString(forKey: "welcome.title", table: "Feature")
        // snippet: end
        _ = title
    }
}
