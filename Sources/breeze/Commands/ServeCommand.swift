import ArgumentParser
import BreezeKit
import Foundation

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract:
            "Serve a folder over HTTP with ETag, Last-Modified, 304, Range and the Cache-Control publish sets, for development."
    )

    @Argument(help: "The folder to serve.", completion: .file())
    var directory: String

    @Option(help: "The address to bind. Keep 127.0.0.1 unless other machines must reach it.")
    var host = "127.0.0.1"

    @Option(help: "The port; 0 picks a free one.")
    var port = 8080

    @Flag(
        name: .customLong("follow-links"),
        help: "Serve files that links in the folder point to outside it (refused by default)."
    )
    var followLinks = false

    @Flag(help: "Do not log requests.")
    var quiet = false

    @Option(help: "Seconds a connection may stay open with no request before it is closed.")
    var idleTimeout = 5

    @Option(help: "Connections open at once (default: what the descriptor limit allows); more wait their turn.")
    var maxConnections: Int?

    @OptionGroup var cache: CacheOptions

    func validate() throws {
        try CheckedNumber.require(port, in: CheckedNumber.port, "--port", "a TCP port (0: any free one)")
        try CheckedNumber.require(idleTimeout, in: 1...3_600, "--idle-timeout", "seconds")
        if let maxConnections {
            try CheckedNumber.require(maxConnections, in: 1...65_536, "--max-connections", "connections")
        }
        guard Self.resolves(host) else {
            throw ValidationError(
                "--host: '\(TerminalText.escaped(host))' is not an address or a name this machine resolves; use 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)."
            )
        }
    }

    /// Whether `host` is an address, or a name `getaddrinfo` turns into one.
    static func resolves(_ host: String) -> Bool {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        defer { if let found { freeaddrinfo(found) } }
        return getaddrinfo(host, nil, &hints, &found) == 0 && found != nil
    }

    func run() async throws {
        let root = URL(fileURLWithPath: directory).standardizedFileURL
        try CommandFailure.requireFolder(root.path)
        let logs = !quiet
        let server: RunningServer
        do {
            var configured = StaticFileServer(
                root: root,
                host: host,
                port: port,
                followsLinksOutside: followLinks,
                cachePolicy: cache.policy
            )
            configured.idleTimeout = .seconds(idleTimeout)
            if let maxConnections { configured.maxConnections = maxConnections }
            server = try await configured.start { exchange in
                if logs {
                    // A client's request line, printed as a terminal shows it safely.
                    TerminalText.writeError("\(exchange.method) \(exchange.path) \(exchange.status)")
                }
            }
        } catch { throw CommandFailure(error) }
        print("Serving \(root.path) at \(server.url)")
        fflush(nil)
        let lines = ServedContent.syncLines(ServedContent.items(in: root, servedAt: server.url))
        if !lines.isEmpty { print(lines.joined(separator: "\n")) }
        fflush(nil)
        try await server.wait()
    }
}
