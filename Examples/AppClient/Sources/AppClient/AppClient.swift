import Foundation
import FreshAir

/// What an app does at launch, in a command: keep a bundle current with the default
/// `URLSession` transport, then read a localized string from the live copy.
///
///     AppClient BUNDLE-URL FOLDER
@main
struct AppClient {
    static func main() async {
        let arguments = CommandLine.arguments
        guard arguments.count == 3, let remote = URL(string: arguments[1]) else {
            FileHandle.standardError.write(Data("usage: AppClient BUNDLE-URL FOLDER\n".utf8))
            exit(64)
        }
        let folder = URL(fileURLWithPath: arguments[2])
        let store = BundleStore(
            root: folder.appendingPathComponent("Store"),
            liveLink: folder.appendingPathComponent("Content")
        )
        var environment = ConditionEnvironment.current(appVersion: "1.0")
        environment["displayScale"] = 2
        environment["language"] = "en"

        let transport = URLSessionTransport()  // shared by every sync of this app; its lifetime is ours
        let sync = BundleSync(remote: remote, store: store, environment: environment, transport: transport)
        do {
            let summary = try await sync.run()
            print(summary.oneLine)
            let content = ContentBundle(root: folder.appendingPathComponent("Content"), environment: environment)
            print("welcome.title = \(content.localizedString(forKey: "welcome.title", table: "Feature"))")
            print(
                "image: \(content.imageURL(named: "welcome", subdirectory: "Resources")?.lastPathComponent ?? "none")"
            )
        } catch {
            FileHandle.standardError.write(Data("AppClient: \(error)\n".utf8))
            exit(1)
        }
    }
}
