import ArgumentParser
import BreezeKit
import Foundation
import FreshAir

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Download the slice of a remote .freshair bundle that applies to a device.",
        discussion: """
            After a successful sync DIR/<path> is each selected file of the live version. DIR is a \
            link to the live version, switched atomically; versions are kept in the store folder \
            (default: .<DIR name>.freshair-store beside DIR), with the previous one for rollback.
            """)

    @Argument(help: "The bundle folder URL (…/App.freshair/) or its manifest.json.")
    var url: String

    @Argument(help: "Where the live content appears.")
    var directory: String

    @Option(name: .customLong("env"), help: ArgumentHelp("Set a condition key, e.g. --env appVersion=1.1.", valueName: "KEY=VALUE"))
    var environment: [String] = []

    @Option(help: "The store folder (versions, staging, partial downloads).")
    var store: String?

    @Option(help: "Files downloaded at once.")
    var concurrency: Int = 8

    @Option(help: "Attempts per request for transient failures (1 = no retry).")
    var attempts: Int = 4

    @Option(name: .customLong("header"), help: ArgumentHelp("Send a header with every request.", valueName: "NAME: VALUE"))
    var headers: [String] = []

    @Flag(help: "Print the summary as JSON.")
    var json = false

    func run() async throws {
        guard let remote = URL(string: url), remote.scheme == "http" || remote.scheme == "https" else {
            throw ValidationError("'\(url)' is not an http(s) URL.")
        }
        var configuration = SyncConfiguration()
        configuration.concurrency = max(1, concurrency)
        configuration.retry = RetryPolicy(maxAttempts: attempts)
        configuration.headers = try headers.map(Self.parseHeader)
        let transport = AsyncHTTPClientTransport(connectionsPerHost: configuration.concurrency)
        let sync = BundleSync(
            remote: remote, store: StoreLocation.store(for: directory, explicit: store),
            environment: try EnvironmentOptions.apply(environment, to: .current()),
            transport: transport, configuration: configuration)
        let progress = ProgressLine(enabled: !json && ProgressLine.isTerminal)
        let outcome: Result<SyncSummary, any Error>
        do {
            var summary: SyncSummary?
            for try await event in sync.updates() {
                progress.show(event)
                if case .finished(let final) = event { summary = final }
            }
            outcome = .success(summary!)
        } catch {
            outcome = .failure(error)
        }
        progress.clear()
        try await transport.shutdown()
        switch outcome {
        case .success(let summary):
            print(json ? try JSONOutput.encode(summary) : summary.oneLine)
        case .failure(let error):
            throw CommandFailure(error)
        }
    }

    static func parseHeader(_ text: String) throws -> (name: String, value: String) {
        guard let colon = text.firstIndex(of: ":") else { throw ValidationError("--header takes 'Name: value', got '\(text)'.") }
        return (String(text[..<colon]).trimmingCharacters(in: .whitespaces), String(text[text.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
    }
}

/// Where `breeze sync` and `breeze rollback` keep a directory's store.
enum StoreLocation {
    static func store(for directory: String, explicit: String?) -> BundleStore {
        let live = URL(fileURLWithPath: directory).standardizedFileURL
        let root = explicit.map { URL(fileURLWithPath: $0) }
            ?? live.deletingLastPathComponent().appendingPathComponent(".\(live.lastPathComponent).freshair-store")
        return BundleStore(root: root, liveLink: live)
    }
}

/// `--env KEY=VALUE` options over a base environment.
enum EnvironmentOptions {
    static func apply(_ assignments: [String], to base: ConditionEnvironment) throws -> ConditionEnvironment {
        var environment = base
        for assignment in assignments {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw ValidationError("--env takes KEY=VALUE, got '\(assignment)'.")
            }
            let key = String(assignment[..<equals])
            let value = String(assignment[assignment.index(after: equals)...])
            environment[key] = .string(value)
        }
        return environment
    }
}

enum JSONOutput {
    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
