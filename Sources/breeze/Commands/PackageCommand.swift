import ArgumentParser
import BreezeKit
import Foundation

struct PackageCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "package",
        abstract: "Pack a folder as a .tgz (or .tar) package, optionally with the .meta an app's bundled copy needs."
    )

    @Argument(help: "The folder to pack.", completion: .file())
    var folder: String

    @Option(name: .shortAndLong, help: "The package to write: NAME.tgz, NAME.tar.gz or NAME.tar.")
    var output: String

    @Flag(help: "Also write OUTPUT.meta with the newest file's date as Last-Modified.")
    var meta = false

    @Flag(help: "Print JSON: {\"output\", \"files\", \"bytes\", \"lastModified\"}.") var json = false

    func run() throws {
        // A missing folder would otherwise make an empty package, which devices would install.
        try CommandFailure.requireFolder(folder)
        let summary: PackageWriter.Summary
        do {
            summary = try PackageWriter.write(
                folder: URL(fileURLWithPath: folder),
                to: URL(fileURLWithPath: output),
                meta: meta
            )
        } catch { throw CommandFailure(error) }
        struct Written: Encodable {
            var output: String
            var files: Int
            var bytes: Int64
            var lastModified: String
        }
        if json {
            let written = Written(
                output: output,
                files: summary.files,
                bytes: summary.bytes,
                lastModified: summary.lastModified
            )
            return print(try JSONOutput.encode(written))
        }
        print(
            "Wrote \(output): \(counted(summary.files, "file")), \(counted(Int(summary.bytes), "byte"))"
                + (meta ? "; \(output).meta Last-Modified \(summary.lastModified)" : "")
        )
    }
}

struct RepositoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repo",
        abstract: "Publish bundles into a repository folder (index.json and <name>-<version>.tar.gz).",
        subcommands: [Add.self]
    )

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add FOLDER as the next version of bundle NAME; the version moves only when the content changed."
        )

        @Argument(help: "The bundle's content.", completion: .file())
        var folder: String

        @Argument(help: "The repository folder (<source>/<repo id>), holding index.json.", completion: .file())
        var repository: String

        @Option(help: "The bundle's name (default: the folder's name).")
        var name: String?

        /// Signs the index: `--key FILE` (repeat for several), `--key -`, `--key-env NAME`, `--expires`.
        @OptionGroup var keys: SigningKeyOptions

        @Flag(help: "Print JSON: {\"name\", \"version\", \"published\", \"archive\"}.") var json = false

        func run() throws {
            // A missing folder would otherwise publish an empty version of the bundle.
            try CommandFailure.requireFolder(folder)
            let source = URL(fileURLWithPath: folder)
            let outcome: RepositoryPublisher.Outcome
            do {
                let signingKeys: [SigningKey]
                do { signingKeys = try keys.signingKeys() } catch let error as ValidationError { throw error }
                outcome = try RepositoryPublisher.add(
                    folder: source,
                    as: name ?? source.lastPathComponent,
                    to: URL(fileURLWithPath: repository),
                    signingWith: signingKeys,
                    options: SigningOptions(validity: keys.validity)
                )
            } catch let error as ValidationError { throw error } catch { throw CommandFailure(error) }
            struct Added: Encodable {
                var name: String
                var version: Int
                var published: Bool
                var archive: String?
            }
            if json {
                let added = Added(
                    name: outcome.name,
                    version: outcome.version,
                    published: outcome.published,
                    archive: outcome.archive?.lastPathComponent
                )
                return print(try JSONOutput.encode(added))
            }
            if outcome.published {
                print("Published \(outcome.name) version \(outcome.version): \(outcome.archive!.lastPathComponent)")
            } else {
                print("\(outcome.name) is unchanged at version \(outcome.version); nothing published.")
            }
        }
    }
}
