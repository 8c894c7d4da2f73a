import Foundation
import FreshAir

/// What an app does at launch, in a command: keep a bundle current with the default
/// `URLSession` transport, then read a localized string and an image from the live copy.
/// README shows `syncAndRead`'s body as it is here, between its markers (scripts/check-readme).
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
        do {
            try await syncAndRead(remote: remote, folder: URL(fileURLWithPath: arguments[2]))
        } catch {
            FileHandle.standardError.write(Data("AppClient: \(error)\n".utf8))
            exit(1)
        }
    }

    static func syncAndRead(remote: URL, folder: URL) async throws {
        // README snippet: start
        let store = BundleStore(
            root: folder.appendingPathComponent("Store"),
            liveLink: folder.appendingPathComponent("Content")
        )
        var environment = ConditionEnvironment.current(appVersion: "1.0")
        environment["displayScale"] = 2  // current() reads the screen on a device; set here for Linux
        environment["language"] = "en"

        let sync = BundleSync(remote: remote, store: store, environment: environment, transport: URLSessionTransport())
        print(try await sync.run().oneLine)  // one request, no body, when nothing changed

        let content = ContentBundle(root: folder.appendingPathComponent("Content"), environment: environment)
        print("welcome.title = \(content.localizedString(forKey: "welcome.title", table: "Feature"))")
        print("image: \(content.imageURL(named: "welcome", subdirectory: "Resources")?.lastPathComponent ?? "none")")
        // README snippet: end
    }
}
