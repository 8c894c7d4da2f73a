import ArgumentParser
import BreezeKit
import Foundation

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Serve a built-in example bundle on loopback and show a sync, an edit, a 304 and an upgrade."
    )

    @Option(help: "Where to write the example (default: a new temporary folder).")
    var workspace: String?

    func run() async throws {
        let folder =
            workspace.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent(
                "freshair-demo-\(UUID().uuidString.prefix(8))"
            )
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try await DemoScenario(workspace: folder) { print($0) }.run()
        } catch {
            throw CommandFailure(error)
        }
    }
}
