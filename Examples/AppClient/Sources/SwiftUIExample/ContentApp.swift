// A SwiftUI app's use of FreshAir: one `ContentModel` for the app's content and one
// `RepositoryModel` for its downloadable levels, refreshed at launch and whenever the app comes
// back to the foreground. SwiftUI exists only on Apple platforms: this file is built there, and
// is empty on Linux, where CI builds the rest of this package.
#if canImport(SwiftUI)
import FreshAir
import SwiftUI

/// The app (`Examples/ContentApp.swiftpm` runs it: its `main.swift` calls `ContentApp.main()`).
struct ContentApp: App {
    @State private var content = ContentModel(FreshAirContent(remote: ExampleServer.content()))
    @State private var levels = RepositoryModel(
        Repository(source: ExampleServer.levels(), id: ExampleServer.levelsID)
    )
    @Environment(\.scenePhase) private var scenePhase

    var body: some Scene {
        WindowGroup {
            TabView {
                HomeView(content: content).tabItem { Label("Home", systemImage: "house") }
                LevelsView(levels: levels).tabItem { Label("Levels", systemImage: "square.stack") }
            }
            .task {
                await content.refresh()
                await levels.refresh()
            }
            .onChange(of: scenePhase) { _, phase in
                guard phase == .active else { return }
                Task {
                    await content.refresh()
                    await levels.refresh()
                }
            }
        }
    }
}

/// The levels installed from the repository, each at its version; pull to check for new ones.
struct LevelsView: View {
    let levels: RepositoryModel

    var body: some View {
        VStack {
            List(levels.bundles.keys.sorted(), id: \.self) { name in
                LabeledContent(name, value: "version \(levels.bundles[name] ?? 0)")
            }
            .refreshable { await levels.refresh() }
            Text(ContentStatus.text(for: levels.phase, installed: levels.bundles.count)).font(.footnote)
        }
    }
}

struct HomeView: View {
    let content: ContentModel

    var body: some View {
        VStack(spacing: 16) {
            Text(content.live.localizedString(forKey: "welcome.title", table: "Feature"))
                .font(.largeTitle)
            if let image = content.live.image(named: "welcome", subdirectory: "Resources") {
                AsyncImage(url: image.url, scale: image.scale)  // the @3x file, drawn at 3 pixels a point
            }
            Text(ContentStatus.text(for: content.phase)).font(.footnote)
            if case .required(_, let url?) = content.updateStatus {
                Link("Update the app to continue", destination: url)
            }
        }
        .sheet(isPresented: whatsNewShown) {
            List(content.whatsNew, id: \.key) { feature in
                Label(feature.title ?? feature.key, systemImage: "sparkles")
            }
        }
        .alert("A new version is available", isPresented: updatePromptShown) {
            Button("Later") { content.updatePromptShown() }
            Button("Skip this version") { content.skipAvailableUpdate() }
        }
    }

    /// Shown while the model says to ask; either answer turns `shouldPromptForUpdate` false.
    private var updatePromptShown: Binding<Bool> {
        Binding(get: { content.shouldPromptForUpdate && !isRequired }, set: { _ in })
    }

    private var isRequired: Bool {
        if case .required = content.updateStatus { true } else { false }
    }

    /// Shown while there is something new; closing the sheet marks it seen.
    private var whatsNewShown: Binding<Bool> {
        Binding(get: { !content.whatsNew.isEmpty }, set: { if !$0 { content.dismissWhatsNew() } })
    }
}
#endif
