import ArgumentParser
import Foundation
import FreshAir

struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Re-hash the live content of DIR against what was installed; list missing, changed and extra files.",
        discussion: """
            DIR is a directory `breeze sync` keeps current: a bundle, a package, or (with --repo at sync) \
            a repository, whose bundles are each verified. Exits 1 when anything is damaged; the next \
            `breeze sync` then repairs it (a bundle fetches just the damaged files, a package or a \
            repository bundle is fetched whole).
            """
    )

    @Argument(help: "The directory a `breeze sync` keeps current.", completion: .file())
    var directory: String

    @Option(help: "The store folder, if `breeze sync` was given one.")
    var store: String?

    @Flag(help: "Print the reports as JSON.")
    var json = false

    func run() async throws {
        try CommandFailure.requireExisting(directory)
        var reports: [String: VerificationReport] = [:]
        do {
            for (name, store) in stores() {
                guard let report = try store.verify() else { continue }
                reports[name] = report
            }
        } catch {
            throw CommandFailure(error)
        }
        guard !reports.isEmpty else {
            throw CommandFailure(VerifyFailure("\(directory) holds no content installed by `breeze sync`"))
        }
        if json {
            print(try JSONOutput.encode(reports))
        } else {
            for (name, report) in reports.sorted(by: { $0.key < $1.key }) {
                let prefix = name.isEmpty ? "" : "\(name): "
                print(prefix + report.oneLine)
                for (word, paths) in [
                    ("missing", report.missing), ("changed", report.changed), ("extra", report.extra),
                ] {
                    for path in paths { print("  \(word): \(path)") }
                }
            }
        }
        if reports.values.contains(where: { !$0.isIntact }) { throw ExitCode(1) }
    }

    /// The stores behind DIR: one for a bundle or package, one per bundle for a repository.
    private func stores() -> [(String, BundleStore)] {
        let live = URL(fileURLWithPath: directory).standardizedFileURL
        // A repository keeps its bundles' stores inside DIR, or beside it when it switches whole.
        let inside = live.appendingPathComponent(".freshair-repository/bundles")
        let beside = live.deletingLastPathComponent().appendingPathComponent(
            ".\(live.lastPathComponent).freshair-repository/bundles"
        )
        for bundles in [inside, beside] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: bundles.path)) ?? []
            guard store == nil, !names.isEmpty else { continue }
            return names.sorted().map { name in
                (
                    name,
                    BundleStore(
                        root: bundles.appendingPathComponent(name),
                        liveLink: bundles == inside ? live.appendingPathComponent(name) : nil
                    )
                )
            }
        }
        return [("", StoreLocation.store(for: directory, explicit: store))]
    }
}

/// A verification that could not start, said plainly.
struct VerifyFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
