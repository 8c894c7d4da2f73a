import Foundation

/// A real nginx (Debian's) serving a folder on 127.0.0.1 at a free port, with an access
/// log the tests read to count requests and body bytes.
///
/// `/slow/…` serves the same folder, throttled to 512 KB/s unless the request has a `Range`
/// header: a download there can be killed midway and its resumption runs at full speed.
/// `/dribble/…` sends 100 bytes a second, whatever is asked (a slow-retrieval attacker);
/// `/no-etag/…` sends `Last-Modified` alone, so a file's mtime is the only validator;
/// `/no-range/…` ignores `Range` and answers `200` with the whole file, as some servers do;
/// `/few-per-connection/…` closes each connection after its third answer, requests sent behind
/// it unanswered.
final class Nginx: @unchecked Sendable {
    /// One line of the access log.
    struct Request: Equatable {
        var status: Int
        var bodyBytes: Int
        var method: String
        var path: String
        var range: String
    }

    let root: URL
    let port: Int
    private let home: TemporaryFolder
    private let process: Process

    /// The server's root URL, ending in `/`.
    var url: URL { URL(string: "http://127.0.0.1:\(port)/")! }
    /// With `tls`: the port serving the same folder over https, HTTP/2 offered beside
    /// HTTP/1.1 as a CDN does, with a certificate for 127.0.0.1 signed by its own key
    /// (``certificate``, PEM), and `/to-http/…` redirecting to the plain-http server.
    private(set) var tlsPort: Int?
    var certificate: URL { home.path("cert.pem") }
    var httpsURL: URL? { tlsPort.map { URL(string: "https://127.0.0.1:\($0)/")! } }

    static var executable: String? {
        ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    init(serving root: URL, tls: Bool = false) throws {
        guard let executable = Self.executable else {
            throw TestSetupError("nginx is not installed: run scripts/test, which installs it")
        }
        _ = Self.orphansStopped
        self.root = root
        home = try TemporaryFolder("nginx")
        if tls { try Self.makeCertificate(in: home) }
        var lastError = ""
        for _ in 0..<5 {
            let port = try freeLoopbackPort()
            let tlsPort = tls ? try freeLoopbackPort() : nil
            try Self.configuration(root: root, home: home.url, port: port, tlsPort: tlsPort)
                .write(to: home.path("nginx.conf"), atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["-p", home.url.path, "-c", home.path("nginx.conf").path]
            // Never hand nginx the test runner's pipes: it would hold them open.
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(10)
            func listening() -> Bool { isListening(port: port) && (tlsPort.map(isListening) ?? true) }
            while process.isRunning, !listening(), Date() < deadline { usleep(20_000) }
            if process.isRunning, listening() {
                self.port = port
                self.tlsPort = tlsPort
                self.process = process
                return
            }
            process.stopNow()
            process.waitUntilExit()
            lastError = home.path("error.log").text ?? "no error log"
        }
        throw TestSetupError("nginx did not start: \(lastError)")
    }

    /// Stops, once a test process, the nginx servers a crashed test run left behind: their
    /// parent is gone, so no `stop()` will come. A run that traps mid-test left 128 of them.
    private static let orphansStopped: Void = {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return }
        for pid in entries.compactMap(Int32.init) {
            guard let command = commandLine(pid), command.hasPrefix("nginx: master process"),
                command.contains("/freshair-nginx-"), let parent = parentID(pid),
                !(commandLine(parent)?.contains(".xctest") ?? false)
            else { continue }
            kill(pid, SIGTERM)
        }
    }()

    private static func commandLine(_ pid: Int32) -> String? {
        (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")))
            .map { String(decoding: $0, as: UTF8.self).replacingOccurrences(of: "\0", with: " ") }
    }

    /// The fourth field of `/proc/PID/stat`, after the name in parentheses (which may hold spaces).
    private static func parentID(_ pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ").dropFirst().first.flatMap { Int32($0) }
    }

    /// A self-signed certificate for 127.0.0.1 (openssl, from Debian), as `cert.pem` and `key.pem`.
    private static func makeCertificate(in home: TemporaryFolder) throws {
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", home.path("key.pem").path, "-out", home.path("cert.pem").path,
        ]
        openssl.standardOutput = FileHandle.nullDevice
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        guard openssl.terminationStatus == 0 else {
            throw TestSetupError("openssl could not make a test certificate (scripts/test installs openssl)")
        }
    }

    private static func configuration(root: URL, home: URL, port: Int, tlsPort: Int? = nil) -> String {
        let tlsServer =
            tlsPort.map { tlsPort in
                """
                server {
                    listen 127.0.0.1:\(tlsPort) ssl http2;
                    access_log \(home.path)/access.log freshair;
                    access_log \(home.path)/protocols.log protocols;
                    ssl_certificate \(home.path)/cert.pem;
                    ssl_certificate_key \(home.path)/key.pem;
                    root \(root.path);
                    location /to-http/ { rewrite ^/to-http/(.*)$ http://127.0.0.1:\(port)/$1 redirect; }
                }
                """
            } ?? ""
        return """
            daemon off;
            master_process on;
            worker_processes 1;
            pid \(home.path)/nginx.pid;
            error_log \(home.path)/error.log warn;
            events { worker_connections 256; }
            http {
                log_format freshair '$status $body_bytes_sent $request_method $uri "$http_range"';
                log_format protocols '$server_protocol';
                log_format connections '$connection $connection_requests $pipe $uri';
                access_log \(home.path)/access.log freshair;
                access_log \(home.path)/connections.log connections;
                client_body_temp_path \(home.path)/client_body;
                proxy_temp_path \(home.path)/proxy;
                fastcgi_temp_path \(home.path)/fastcgi;
                uwsgi_temp_path \(home.path)/uwsgi;
                scgi_temp_path \(home.path)/scgi;
                types { application/json json; text/markdown md; }
                default_type application/octet-stream;
                server {
                    listen 127.0.0.1:\(port);
                    root \(root.path);
                    location /slow/ {
                        alias \(root.path)/;
                        if ($http_range = "") { set $limit_rate 512k; }
                    }
                    location /dribble/ {
                        alias \(root.path)/;
                        limit_rate 100;
                    }
                    location /no-etag/ {
                        alias \(root.path)/;
                        etag off;
                    }
                    location /no-range/ {
                    alias \(root.path)/;
                    max_ranges 0;
                }
                location /server-error/ { return 500; }
                    location /few-per-connection/ {
                        alias \(root.path)/;
                        keepalive_requests 3;
                    }
                    location /busy/ { add_header Retry-After 1 always; return 503; }
                    location /moved/ { rewrite ^/moved/(.*)$ /$1 redirect; }
                    location /circle/ { rewrite ^/circle/(.*)$ /circle/$1 redirect; }
                }
                \(tlsServer)
            }
            """
    }

    /// The protocol of every request the https port answered so far ("HTTP/1.1", "HTTP/2.0").
    func protocolsOverTLS() -> [String] {
        _ = requests()  // waits until nginx has logged every request
        return (home.path("protocols.log").text ?? "").split(separator: "\n").map(String.init)
    }

    /// One request as the connection log has it.
    struct ConnectionEntry {
        /// nginx's serial number of the connection.
        var connection: Int
        /// Its place among the connection's requests, from 1.
        var request: Int
        /// nginx read it while answering an earlier one (HTTP/1.1 pipelining: `$pipe`).
        var pipelined: Bool
        var path: String
    }

    /// Every request logged so far, with the connection it came on.
    func connections() -> [ConnectionEntry] {
        _ = requests()  // waits until nginx has logged every request
        return (home.path("connections.log").text ?? "").split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 3)
            guard parts.count == 4, let connection = Int(parts[0]), let request = Int(parts[1]) else { return nil }
            return ConnectionEntry(
                connection: connection,
                request: request,
                pipelined: parts[2] == "p",
                path: String(parts[3])
            )
        }
    }

    /// Every request logged so far. nginx writes a line as it finalizes a request, which can
    /// be a moment after the client has the response: wait until the log stops growing.
    func requests() -> [Request] {
        var text = home.path("access.log").text ?? ""
        for _ in 0..<50 {
            usleep(20_000)
            let again = home.path("access.log").text ?? ""
            if again == text { break }
            text = again
        }
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 4)
            guard parts.count == 5, let status = Int(parts[0]), let bytes = Int(parts[1]) else { return nil }
            return Request(
                status: status,
                bodyBytes: bytes,
                method: String(parts[2]),
                path: String(parts[3]),
                range: String(parts[4]).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            )
        }
    }

    /// Requests logged after `count` earlier ones.
    func requests(after count: Int) -> [Request] { Array(requests().dropFirst(count)) }

    /// Stops nginx and waits, at most 10 s, for it to exit. Not `waitUntilExit()`: called from
    /// a task, swift-corelibs-foundation's spins its run loop, and twice it never returned.
    func stop() {
        guard process.isRunning else { return }
        let pid = process.processIdentifier
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning, kill(pid, 0) == 0, ContinuousClock.now < deadline { usleep(10_000) }
        if process.isRunning { kill(pid, SIGKILL) }
    }

    deinit { stop() }
}
