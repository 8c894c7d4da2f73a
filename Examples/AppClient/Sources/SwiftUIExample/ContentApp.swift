// A SwiftUI app's use of FreshAir: one `ContentModel`, refreshed at launch and whenever the app
// comes back to the foreground. SwiftUI exists only on Apple platforms: this file is built
// there, and is empty on Linux, where CI builds the rest of this package.
#if canImport(SwiftUI)
import FreshAir
import SwiftUI

struct ContentApp: App {
    @State private var content = ContentModel(
        FreshAirContent(remote: URL(string: "https://cdn.example.com/App.freshair/")!)
    )
    @Environment(\.scenePhase) private var scenePhase

    var body: some Scene {
        WindowGroup {
            HomeView(content: content)
                .task { await content.refresh() }
                .onChange(of: scenePhase) { _, phase in
                    if phase == .active { Task { await content.refresh() } }
                }
        }
    }
}

struct HomeView: View {
    let content: ContentModel

    var body: some View {
        VStack(spacing: 16) {
            Text(content.live.localizedString(forKey: "welcome.title", table: "Feature"))
                .font(.largeTitle)
            if let image = content.live.imageURL(named: "welcome", subdirectory: "Resources") {
                AsyncImage(url: image)  // the @3x, @2x or 1x file for this screen
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
    }

    /// Shown while there is something new; closing the sheet marks it seen.
    private var whatsNewShown: Binding<Bool> {
        Binding(get: { !content.whatsNew.isEmpty }, set: { if !$0 { content.dismissWhatsNew() } })
    }
}
#endif
