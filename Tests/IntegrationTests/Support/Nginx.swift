import Foundation

/// A real nginx (Debian's) serving a folder on 127.0.0.1 at a free port, with an access
/// log the tests read to count requests and body bytes.
///
/// `/slow/…` serves the same folder, throttled to 512 KB/s unless the request has a `Range`
/// header: a download there can be killed midway and its resumption runs at full speed.
/// `/dribble/…` sends 100 bytes a second, whatever is asked (a slow-retrieval attacker);
/// `/no-etag/…` sends `Last-Modified` alone, so a file's mtime is the only validator.
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

    static var executable: String? {
        ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    init(serving root: URL) throws {
        guard let executable = Self.executable else {
            throw TestSetupError("nginx is not installed: run scripts/test, which installs it")
        }
        self.root = root
        home = try TemporaryFolder("nginx")
        var lastError = ""
        for _ in 0..<5 {
            let port = try freeLoopbackPort()
            try Self.configuration(root: root, home: home.url, port: port)
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
            while process.isRunning, !isListening(port: port), Date() < deadline { usleep(20_000) }
            if process.isRunning, isListening(port: port) {
                self.port = port
                self.process = process
                return
            }
            process.terminate()
            process.waitUntilExit()
            lastError = home.path("error.log").text ?? "no error log"
        }
        throw TestSetupError("nginx did not start: \(lastError)")
    }

    private static func configuration(root: URL, home: URL, port: Int) -> String {
        """
        daemon off;
        master_process on;
        worker_processes 1;
        pid \(home.path)/nginx.pid;
        error_log \(home.path)/error.log warn;
        events { worker_connections 256; }
        http {
            log_format freshair '$status $body_bytes_sent $request_method $uri "$http_range"';
            access_log \(home.path)/access.log freshair;
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
                location /server-error/ { return 500; }
                location /busy/ { add_header Retry-After 1 always; return 503; }
                location /moved/ { rewrite ^/moved/(.*)$ /$1 redirect; }
                location /circle/ { rewrite ^/circle/(.*)$ /circle/$1 redirect; }
            }
        }
        """
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

    /// Stops nginx and waits for it to exit.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    deinit { stop() }
}
