import Foundation
import FreshAir

/// Stands for a progress view.
final class ProgressBar { var progress = 0.0 }

enum GettingStarted {
    @MainActor
    static func launch() async {
        // snippet: model
        let content = FreshAirContent(remote: URL(string: "https://cdn.example.com/App.freshair/")!)
        let model = ContentModel(content)  // in SwiftUI: @State private var model = ContentModel(content)
        await model.refresh()  // never throws: a failure is a phase, and the live version stays
        switch model.phase {
        case .current(let version): print("content version \(version ?? 0)")
        case .failed(let error, let live): print("still on version \(live ?? 0): \(error)")
        default: break
        }
        let welcome = model.live.localizedString(forKey: "welcome.title", table: "Feature")
        let hero = model.live.imageURL(named: "hero")  // hero@3x.png on a 3x iPhone, else @2x…
        // snippet: end
        _ = (welcome, hero)
    }

    static func environment(url: URL) {
        // snippet: environment
        var environment = ConditionEnvironment.current()  // platform, versions, scale, device, language
        environment["channel"] = "beta"  // any key your manifests' conditions use
        let content = FreshAirContent(remote: url, environment: environment)
        // snippet: end
        _ = content
    }

    static func progress(content: FreshAirContent, bar: ProgressBar) async throws {
        // snippet: progress
        for try await event in content.updates() {
            if case .progress(let progress) = event { bar.progress = progress.fractionCompleted }
        }
        // snippet: end
    }
}
