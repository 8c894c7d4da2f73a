import Foundation
import FreshAir

/// What an app does at launch, in a command: keep a bundle current with `FreshAirContent`'s
/// defaults (the `URLSession` transport), then read a localized string and an image from the
/// live copy.
/// README shows the region of `syncAndRead` between its snippet markers (scripts/check-readme).
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
        // snippet: readme
        // On a device, FreshAirContent(remote:) alone: the store under Application Support,
        // the bundled copy from Bundle.main, the screen's scale, the app's localization.
        let content = FreshAirContent(remote: remote, folder: folder)
        print(try await content.run().oneLine)  // one request, no body, when nothing changed

        let live = content.live  // follows each new version as it goes live
        print("welcome.title = \(live.localizedString(forKey: "welcome.title", table: "Feature"))")
        print("image: \(live.imageURL(named: "welcome", subdirectory: "Resources")?.lastPathComponent ?? "none")")
        // snippet: end
    }
}
