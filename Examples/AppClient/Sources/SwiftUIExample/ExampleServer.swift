import Foundation

/// Where the example app syncs from. Plain Swift, so CI builds it, while the views beside it
/// need SwiftUI.
///
/// By default, the author's quick start served on the Mac (`breeze release Content.freshair
/// site/Content.freshair --key release.key`, then `breeze serve site`), as the simulator reaches
/// it; set `FRESHAIR_CONTENT` and `FRESHAIR_LEVELS` in the Xcode scheme's environment for
/// another server (a device needs the Mac's address, and `breeze serve site --host 0.0.0.0`).
enum ExampleServer {
    /// The bundle the app keeps current.
    static func content(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        url(environment["FRESHAIR_CONTENT"]) ?? URL(string: "http://127.0.0.1:8080/Content.freshair/")!
    }

    /// The repository of levels (`breeze repo add LEVEL site/levels`): its source folder.
    static func levels(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        url(environment["FRESHAIR_LEVELS"]) ?? URL(string: "http://127.0.0.1:8080/")!
    }

    /// The repository's id: the folder below the source.
    static let levelsID = "levels"

    private static func url(_ text: String?) -> URL? {
        text.flatMap { URL(string: $0) }.flatMap { $0.scheme == nil ? nil : $0 }
    }
}
