import ArgumentParser
import Foundation
import FreshAir

struct RollbackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollback",
        abstract: "Make the version before the live one live again."
    )

    @Argument(help: "The directory a `breeze sync` keeps current.")
    var directory: String

    @Option(help: "The store folder, if `breeze sync` was given one.")
    var store: String?

    @Flag(help: "Print JSON: {\"version\", \"source\"}.") var json = false

    func run() async throws {
        try CommandFailure.requireExisting(directory)
        do {
            let record = try await StoreLocation.store(for: directory, explicit: store).restorePrevious()
            struct RolledBack: Encodable {
                var version: Int
                var source: String
            }
            if json { return print(try JSONOutput.encode(RolledBack(version: record.id, source: record.source))) }
            print("Rolled back to version \(record.id) (from \(record.source)).")
        } catch {
            throw CommandFailure(error)
        }
    }
}
