import ArgumentParser
import BreezeKit
import CSystemCalls
import Foundation
import FreshAir
import FreshAirAsyncHTTPClient

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Keep DIR current from a .freshair bundle, a package, or a repository of bundles.",
        discussion: """
            A bundle URL (…/App.freshair/ or its manifest.json): DIR/<path> is each selected file. \
            A package URL (.tgz, .tar.gz, .tar, .gz, .zip): DIR/<path> is each file of the package; \
            --bundled names the copy an app ships, installed first and when its .meta is newer. \
            --repo ID with a source URL (or the URL of <source>/<ID>/index.json alone): DIR/<name>/ is each bundle of <source>/<ID>/index.json.
            DIR is a link to the live version, switched atomically; versions are kept in the store \
            folder (default: .<DIR name>.freshair-store beside DIR), with the previous one for rollback.
            """
    )

    @Argument(
        help:
            "The bundle folder URL, the package URL, the repository's index.json URL (or its source URL with --repo); file:// URLs and local paths too.",
        completion: .file()
    )
    var url: String

    @Argument(help: "Where the live content appears.", completion: .file())
    var directory: String

    @Option(
        name: .customLong("env"),
        help: ArgumentHelp("Set a condition key, e.g. --env appVersion=1.1.", valueName: "KEY=VALUE")
    )
    var environment: [String] = []

    @Option(help: "The store folder (versions, staging, partial downloads).", completion: .directory)
    var store: String?

    @Option(
        name: .customLong("mirror"),
        help: ArgumentHelp(
            "A byte-identical copy of URL, tried in order when URL fails or serves what is refused (repeat for several).",
            valueName: "URL"
        )
    )
    var mirrors: [String] = []

    @Option(help: "Connections, and files downloaded at once (small files: --pipeline times as many).")
    var concurrency: Int = 8

    @Option(
        help: ArgumentHelp(
            "Small files' requests sent on a connection before the first is answered (HTTP/1.1 pipelining); 1 sends one at a time, for a proxy that mishandles it.",
            valueName: "REQUESTS"
        )
    )
    var pipeline: Int = 8

    @Option(help: "Attempts per request for transient failures (1 = no retry).")
    var attempts: Int = 4

    @Option(
        name: .customLong("header"),
        help: ArgumentHelp("Send a header with every request.", valueName: "NAME: VALUE")
    )
    var headers: [String] = []

    @Option(help: "A package's bundled default copy (with an optional <package>.meta beside it).", completion: .file())
    var bundled: String?

    @Option(help: "Sync the repository with this id from the source URL.")
    var repo: String?

    @Option(help: "With --repo: download bundle archives from this URL instead of the source.")
    var cdn: String?

    @Flag(
        help:
            "With --repo: switch every bundle at once (DIR becomes a link to a snapshot of all of them), so they always match."
    )
    var atomic = false

    @Option(
        name: .customLong("trusted-key"),
        help: ArgumentHelp(
            "Accept only a root manifest signed by this Ed25519 public key (as `breeze keygen` prints it); repeat for several.",
            valueName: "BASE64"
        )
    )
    var trustedKeys: [String] = []

    @Option(
        name: .customLong("identity"),
        help: ArgumentHelp(
            "With keys pinned: the name a release must be signed for (default: the URL's last path component, as an app expects it).",
            valueName: "NAME"
        )
    )
    var identity: String?

    @Option(
        name: .customLong("keys"),
        help: "Trust the keys of this key document (`breeze keys create`) instead of --trusted-key.",
        completion: .file()
    )
    var keyDocument: String?

    @Option(
        name: .customLong("key-updates"),
        help: "With --keys: the folder URL where newer key documents are published (<version>.json)."
    )
    var keyUpdates: String?

    @OptionGroup var trust: TrustOptions

    @Flag(
        name: .customLong("allow-links"),
        help: "Packages and repository archives may hold symbolic links that stay inside (refused by default)."
    )
    var allowLinks = false

    @Flag(
        name: .customLong("no-chunk-deltas"),
        help: "Download changed large files whole, even where a chunk index would let the unchanged chunks be kept."
    )
    var noChunkDeltas = false

    @Flag(help: "Print the summary as JSON.")
    var json = false

    /// Flags that make no sense together are refused before any work, not silently ignored.
    func validate() throws {
        let isPackage = ArchiveFormat(fileName: URL(string: url)?.lastPathComponent ?? url) != nil
        let named = URL(string: url).flatMap(Repository.address(ofIndex:))
        if let named, let repo, repo != named.id {
            throw ValidationError(
                "\(url) is the index of repository \(named.id), not of --repo \(repo): give the source URL with --repo, or the index's URL alone."
            )
        }
        if repo != nil || named != nil {
            if store != nil {
                throw ValidationError("--store applies to a bundle or a package; a repository keeps its state in DIR.")
            }
            if bundled != nil { throw ValidationError("--bundled applies to a package URL, not to --repo.") }
        } else {
            if cdn != nil { throw ValidationError("--cdn applies with --repo only.") }
            if atomic { throw ValidationError("--atomic applies with --repo only.") }
            if bundled != nil, !isPackage {
                throw ValidationError(
                    "--bundled applies to a package URL (.tgz, .tar.gz, .tar, .gz, .zip), not to a bundle."
                )
            }
        }
        if keyUpdates != nil, keyDocument == nil { throw ValidationError("--key-updates applies with --keys only.") }
        if !trustedKeys.isEmpty, keyDocument != nil {
            throw ValidationError("Pin keys one way: --trusted-key, or a key document with --keys.")
        }
        try CheckedNumber.require(concurrency, in: CheckedNumber.concurrency, "--concurrency", "requests")
        try CheckedNumber.require(attempts, in: 1...100, "--attempts", "attempts")
        guard (1...64).contains(pipeline) else { throw ValidationError("--pipeline takes a number from 1 to 64.") }
    }

    func run() async throws {
        var remote = try Self.sourceURL(url)
        var repo = self.repo
        // `<source>/<ID>/index.json` is the repository ID, as a manifest.json URL is its bundle.
        if let named = Repository.address(ofIndex: remote) { (remote, repo) = (named.source, named.id) }
        let configuration = try syncConfiguration()
        let cdn = try cdn.map(Self.sourceURL)
        let environment = try EnvironmentOptions.apply(environment, to: .current())
        let store = StoreLocation.store(for: directory, explicit: store)
        let mirrors = try self.mirrors.map(Self.sourceURL)
        let output = try await PipeliningTransport.withTransport(
            connectionsPerHost: configuration.concurrency,
            depth: pipeline,
            tlsConfiguration: try trust.tlsConfiguration()
        ) { transport in
            // The three delivery modes, run and reported the one way.
            let updaters = Updaters(
                repo: repo,
                cdn: cdn,
                directory: URL(fileURLWithPath: directory),
                switching: atomic ? .wholeRepository : .perBundle,
                store: store,
                bundled: bundled.map { URL(fileURLWithPath: $0) },
                environment: environment,
                configuration: configuration,
                mirrors: mirrors,
                transport: transport
            )
            let updater = updaters.from(remote)
            // The primary, then the mirrors (a repository's updater tries its own).
            let failover = SourceFailover(
                sources: repo == nil ? [remote] + mirrors : [remote],
                memory: store.stateFolder.appendingPathComponent("source.json").path
            )
            let progress = ProgressLine(enabled: !json && ProgressLine.isTerminal)
            defer { progress.clear() }
            do {
                let summary = try await failover.run { source in
                    try await (source == remote ? updater : updaters.from(source)).run { event in
                        // The manifests are read and the plan made. What the walk freed (the set
                        // of names, the entries passed over) stays in glibc's arenas otherwise,
                        // resident through every download.
                        if case .planned = event { freshair_return_freed_memory() }
                        progress.show(event)
                    }
                }
                // The note on unchecked signatures goes to standard error, with breeze's remedy.
                return (
                    summary: json ? try JSONOutput.encode(summary) : summary.movement,
                    unverifiedNote: summary.unverifiedNote(opening: false)
                )
            } catch {
                // A repository's folder given as a bundle's: the command that syncs it.
                let hint =
                    updater is BundleSync
                    ? await RepositoryAddress.hint(for: error, directory: directory, transport: transport) : nil
                throw CommandFailure(error, hint: hint)
            }
        }
        // After the progress line is cleared, before the summary.
        if let note = output.unverifiedNote {
            let remedy =
                "Pass the publisher's public key with --trusted-key (or a key document with --keys) to refuse content anyone else signed."
            TerminalText.writeError("breeze: note: \(note) \(remedy)")
        }
        print(output.summary)
    }

    /// What the updaters of one `breeze sync` share: ``from(_:)`` makes the one for a source.
    private struct Updaters {
        let repo: String?
        let cdn: URL?
        let directory: URL
        let switching: Repository.Switching
        let store: BundleStore
        let bundled: URL?
        let environment: ConditionEnvironment
        let configuration: SyncConfiguration
        let mirrors: [URL]
        let transport: any HTTPTransport

        /// The delivery mode's updater reading from `source` (the primary, or a mirror).
        func from(_ source: URL) -> any ContentUpdater {
            if let repo {
                var repository = Repository(
                    source: source,
                    id: repo,
                    cdn: cdn,
                    directory: directory,
                    switching: switching,
                    transport: transport,
                    configuration: configuration
                )
                repository.mirrors = mirrors  // a repository fails over by itself
                return repository
            }
            if ArchiveFormat(fileName: source.lastPathComponent) != nil {
                return PackageUpdater(
                    remote: source,
                    store: store,
                    bundledPackage: bundled,
                    transport: transport,
                    configuration: configuration
                )
            }
            return BundleSync(
                remote: source,
                store: store,
                environment: environment,
                transport: transport,
                configuration: configuration
            )
        }
    }

    /// The library's settings from the options: a key or header that does not parse is a usage error.
    private func syncConfiguration() throws -> SyncConfiguration {
        var configuration = SyncConfiguration()
        configuration.concurrency = max(1, concurrency)
        configuration.retry = RetryPolicy(maxAttempts: attempts)
        // breeze names itself first; the library adds FreshAir/VERSION after it. A --header
        // User-Agent of the caller's own replaces breeze's.
        configuration.headers = [("User-Agent", BreezeVersion.userAgent)] + (try headers.map(Self.parseHeader))
        do { configuration.trustedKeys = try trustedKeys.map { try TrustedKey(base64: $0) } } catch {
            throw ValidationError("--trusted-key: \(error)")
        }
        configuration.expectedIdentity = identity
        if allowLinks { configuration.extraction.symbolicLinks = .allowInside }
        configuration.chunkDeltas.isEnabled = !noChunkDeltas
        if let keyDocument {
            let pinned: KeyDocument
            do {
                pinned = try KeyDocument(data: Data(contentsOf: URL(fileURLWithPath: keyDocument)), source: keyDocument)
            } catch {
                throw ValidationError("--keys: \(error)")
            }
            configuration.keyRotation = KeyRotation(pinned: pinned, updates: try keyUpdates.map(Self.sourceURL))
        }
        return configuration
    }

    /// An http(s) URL, a `file://` URL, or a path to a local folder or archive (read as a
    /// `file://` source, with the same checks and atomic switch).
    static func sourceURL(_ text: String) throws -> URL {
        if let url = URL(string: text), let scheme = url.scheme?.lowercased() {
            if scheme == "http" || scheme == "https" { return url }
            if scheme == "file" { return URL(fileURLWithPath: url.path).standardizedFileURL }
        }
        if FileManager.default.fileExists(atPath: text) { return URL(fileURLWithPath: text).standardizedFileURL }
        if let separator = text.range(of: "://") {
            let scheme = text[..<separator.lowerBound]
            let s3 =
                scheme.lowercased() == "s3"
                ? " A device reads a bucket over https: its endpoint's URL, or its CDN's." : ""
            throw ValidationError(
                "\(text): breeze syncs from http://, https:// and file:// URLs and from folders, not \(scheme)://.\(s3)"
            )
        }
        if looksLikeHost(text.split(separator: "/", omittingEmptySubsequences: false).first ?? "") {
            throw ValidationError("\(text): no such folder; a server's URL starts with its scheme: http://\(text)")
        }
        throw CommandFailure(CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: text]))
    }

    /// `127.0.0.1:8080`, `localhost`, `www.example.com`: a server's address typed without
    /// `http://`, not a folder's name (which `Content.freshair` could be).
    static func looksLikeHost(_ component: Substring) -> Bool {
        let host = component.split(separator: ":", maxSplits: 1)
        if host.count == 2, !host[1].isEmpty, host[1].allSatisfy(\.isNumber) { return true }
        let labels = component.split(separator: ".", omittingEmptySubsequences: false)
        let ipv4 = labels.count == 4 && labels.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isNumber) }
        return component == "localhost" || ipv4 || component.hasPrefix("www.")
    }

    static func parseHeader(_ text: String) throws -> (name: String, value: String) {
        guard let colon = text.firstIndex(of: ":") else {
            throw ValidationError("--header takes 'Name: value', got '\(text)'.")
        }
        return (
            String(text[..<colon]).trimmingCharacters(in: .whitespaces),
            String(text[text.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        )
    }
}

/// Where `breeze sync` and `breeze rollback` keep a directory's store.
enum StoreLocation {
    static func store(for directory: String, explicit: String?) -> BundleStore {
        let live = URL(fileURLWithPath: directory).standardizedFileURL
        let root =
            explicit.map { URL(fileURLWithPath: $0) }
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
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
