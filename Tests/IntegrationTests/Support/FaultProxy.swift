import Foundation

/// `scripts/fault-proxy` in front of a server: a real process that cuts, stalls, re-encodes
/// and lies about what the server answers, as the rules it is given say.
final class FaultProxy: @unchecked Sendable {
    /// One answer as the proxy logged it.
    struct Answer: Decodable {
        var method: String?
        var path: String
        /// The request's `User-Agent`.
        var agent: String?
        var range: String?
        var fault: String?
        var status: Int?
        var promised: Int?
        var sent: Int
    }

    let port: Int
    private let process: Process
    private let home: TemporaryFolder

    /// The proxy's root URL, ending in `/`.
    var url: URL { URL(string: "http://127.0.0.1:\(port)/")! }

    init(upstream: URL, extraArguments: [String] = []) throws {
        home = try TemporaryFolder("fault-proxy")
        let script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("scripts/fault-proxy")
        (process, port) = try Process.portPrintingServer(
            "/usr/bin/python3",
            [
                script.path, "--upstream", "\(upstream.host!):\(upstream.port!)", "--rules",
                home.path("rules.json").path,
                "--log", home.path("log.jsonl").path,
            ] + extraArguments,
            name: "scripts/fault-proxy"
        )
    }

    /// Replaces the rules: each `[String: Any]` is a rule of `scripts/fault-proxy`.
    func rules(_ rules: [[String: any Sendable]]) throws {
        let data = try JSONSerialization.data(withJSONObject: ["rules": rules])
        try data.write(to: home.path("rules.json"))
    }

    /// Every answer so far.
    func answers() -> [Answer] {
        (home.path("log.jsonl").text ?? "").split(separator: "\n").compactMap {
            try? JSONDecoder().decode(Answer.self, from: Data($0.utf8))
        }
    }

    /// Kills the proxy: it keeps nothing worth a graceful stop.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { if process.isRunning { stop() } }
}
