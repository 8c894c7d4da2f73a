import ArgumentParser
import Foundation
import FreshAir

struct RollbackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollback",
        abstract:
            "Make the version before the live one live again, on this device (`breeze revert` does it for every device).",
        discussion: """
            DIR is a folder `breeze sync` keeps current. To put the previous release back for \
            every device, revert the destination you published to: `breeze revert DEST --key KEY`.
            """
    )

    @Argument(help: "The directory a `breeze sync` keeps current.", completion: .file())
    var directory: String

    @Option(help: "The store folder, if `breeze sync` was given one.", completion: .directory)
    var store: String?

    @Flag(help: "Print JSON: {\"version\", \"source\"}.") var json = false

    func run() async throws {
        try CommandFailure.requireExisting(directory)
        try Self.refuseContentFolder(directory)
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

    /// A bundle, repository or published folder is content, not a device's folder: the author
    /// who tries `rollback` on it means `revert` (a usage error, 64, that says so).
    static func refuseContentFolder(_ directory: String) throws {
        let folder = URL(fileURLWithPath: directory)
        let isLink = (try? FileManager.default.destinationOfSymbolicLink(atPath: folder.path)) != nil
        let documents = ["manifest.json", "index.json"].filter {
            FileManager.default.fileExists(atPath: folder.appendingPathComponent($0).path)
        }
        guard !isLink, let document = documents.first else { return }
        // A destination a release went to has its objects or its history beside the root.
        let published = ["objects", "history"].contains {
            FileManager.default.fileExists(atPath: folder.appendingPathComponent($0).path)
        }
        let destination = published ? FollowUp.quoted(directory) : "DEST"
        throw ValidationError(
            """
            \(directory) holds \(document): it is content to publish, not a folder `breeze sync` keeps. To put \
            the previous release back for every device, revert where it is published: `breeze revert \(destination) \
            --key KEY` (`breeze history \(destination)` lists the releases).
            """
        )
    }
}
