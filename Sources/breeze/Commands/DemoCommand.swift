import ArgumentParser
import BreezeKit
import Foundation

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Serve a built-in example bundle on loopback and show a sync, an edit, a 304 and an upgrade."
    )

    @Option(
        help: "Where to write the example, kept afterwards (default: a temporary folder, removed at the end).",
        completion: .directory
    )
    var workspace: String?

    func run() async throws {
        let temporary = workspace == nil
        if temporary { Self.removeAbandonedWorkspaces() }
        let folder =
            workspace.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent(
                "\(Self.prefix)\(getpid())-\(UUID().uuidString.prefix(8))"
            )
        defer {
            if temporary {
                try? FileManager.default.removeItem(at: folder)
                print("(The example's temporary folder is removed; `breeze demo --workspace DIR` keeps it.)")
            }
        }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try await DemoScenario(workspace: folder) { print($0) }.run()
        } catch {
            throw CommandFailure(error)
        }
    }

    static let prefix = "freshair-demo-"

    /// Temporary workspaces of demos stopped before they could remove them (Ctrl-C): named with
    /// their process's number, removed once no such process runs.
    static func removeAbandonedWorkspaces() {
        let temporary = FileManager.default.temporaryDirectory
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count).prefix { $0 != "-" }), pid > 0,
                kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            try? FileManager.default.removeItem(at: temporary.appendingPathComponent(name))
        }
    }
}
