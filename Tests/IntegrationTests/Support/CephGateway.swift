import Foundation
import Synchronization

/// A real single-node Ceph cluster (a monitor and one in-memory OSD) with its S3 gateway,
/// radosgw, on 127.0.0.1 at free ports: `scripts/lib/start-ceph-rgw.sh`, which enforces
/// Signature Version 4. It takes about 15 s to start, so one serves the whole test run.
/// `scripts/test` starts it outside the test process and names it in
/// `FRESHAIR_TEST_CEPH_ENDPOINT` (started from inside, its script's exit once went unnoticed
/// by Foundation's `Process` bookkeeping and stalled other tests' shells); without that
/// variable the first test that asks starts one, stopped when the test process exits.
final class CephGateway: Sendable {
    let port: Int
    let folder: String

    var endpoint: String { "http://127.0.0.1:\(port)" }

    /// The environment `breeze publish` reads credentials from (the script's user).
    var credentials: [String: String] {
        ["AWS_ACCESS_KEY_ID": "otakey", "AWS_SECRET_ACCESS_KEY": "otasecret", "AWS_REGION": "us-east-1"]
    }

    /// The public URL of `path` in `bucket`, as a device reads it over plain HTTP.
    func url(_ bucket: String, _ path: String = "") -> URL {
        URL(string: "\(endpoint)/\(bucket)/\(path)")!
    }

    private init(port: Int, folder: String) {
        self.port = port
        self.folder = folder
    }

    /// The gateway of this test run, started on first use.
    static func shared() async throws -> CephGateway {
        if let endpoint = ProcessInfo.processInfo.environment["FRESHAIR_TEST_CEPH_ENDPOINT"],
            let port = URL(string: endpoint)?.port
        {
            return CephGateway(port: port, folder: "")
        }
        return try await Starter.shared.gateway()
    }

    private actor Starter {
        static let shared = Starter()
        private var started: Result<CephGateway, any Error>?

        func gateway() async throws -> CephGateway {
            if let started { return try started.get() }
            let result: Result<CephGateway, any Error>
            do { result = .success(try await CephGateway.start()) } catch { result = .failure(error) }
            started = result
            return try result.get()
        }
    }

    private static func start() async throws -> CephGateway {
        for binary in ["ceph-mon", "ceph-osd", "radosgw", "uuidgen"] where !isInstalled(binary) {
            throw TestSetupError(
                "\(binary) is not installed: run scripts/test, which installs ceph-mon ceph-osd radosgw"
            )
        }
        let folder = NSTemporaryDirectory() + "freshair-ceph-\(getpid())"
        let script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("scripts/lib/start-ceph-rgw.sh")
        var lastError: (any Error)?
        // A port found free can be taken before the daemon binds it: try again on others.
        for _ in 0..<3 {
            let (port, monitorPort) = (try freeLoopbackPort(), try freeLoopbackPort())
            stopCeph(folder)
            do {
                let log = folder + ".log"
                let status = try await runDetached(
                    "bash '\(script.path)' '\(folder)' \(port) \(monitorPort) > '\(log)' 2>&1 < /dev/null"
                )
                guard status == 0 else {
                    throw TestSetupError(
                        "start-ceph-rgw.sh failed: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")"
                    )
                }
                cephFolder.withLock { $0 = folder }
                atexit { cephFolder.withLock { $0 }.map(stopCeph) }
                return CephGateway(port: port, folder: folder)
            } catch {
                lastError = error
            }
        }
        throw lastError!
    }

    /// Runs `command` with `sh -c` and waits for its exit on a thread of its own, by
    /// `waitpid` rather than `Process`: Foundation's `waitUntilExit` spun for ever on this
    /// script (its child stayed a zombie), whose daemons outlive it.
    private static func runDetached(_ command: String) async throws -> Int32 {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                let words: [String] = ["/bin/sh", "-c", command]
                let arguments: [UnsafeMutablePointer<CChar>?] = words.map { word in strdup(word) } + [nil]
                defer { arguments.forEach { free($0) } }
                // The child starts with no signal blocked, whatever this thread blocks.
                var attributes = posix_spawnattr_t()
                posix_spawnattr_init(&attributes)
                defer { posix_spawnattr_destroy(&attributes) }
                var none = sigset_t()
                sigemptyset(&none)
                posix_spawnattr_setsigmask(&attributes, &none)
                posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
                // Nothing open here reaches the daemons, which outlive the script: Foundation's
                // `Process` learns that a child exited when a socket it gave the child closes,
                // and a breeze started by another test at this moment would otherwise never be
                // seen to exit while radosgw held its socket (swift-corelibs-foundation#4795).
                var actions = posix_spawn_file_actions_t()
                posix_spawn_file_actions_init(&actions)
                defer { posix_spawn_file_actions_destroy(&actions) }
                closeInheritedDescriptors(&actions)
                var pid: pid_t = 0
                let spawned = posix_spawn(&pid, "/bin/sh", &actions, &attributes, arguments, environ)
                guard spawned == 0 else {
                    continuation.resume(
                        throwing: TestSetupError("could not start sh: \(String(cString: strerror(spawned)))")
                    )
                    return
                }
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0, errno == EINTR {}
                // Exited normally: the exit code; killed: the signal, as a shell reports it.
                let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
                continuation.resume(returning: code)
            }
        }
    }

    /// Adds "close every descriptor from 3 up" to `actions`: glibc's
    /// `posix_spawn_file_actions_addclosefrom_np` (2.34), which Swift's Glibc module does not
    /// declare, found at run time.
    private static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        else { return }
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
    }

    static func isInstalled(_ name: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(name)")
        }
    }
}

/// The running cluster's folder, for the exit handler (a C function pointer captures nothing).
private let cephFolder = Mutex<String?>(nil)

/// Kills the cluster's daemons (an in-memory store keeps nothing worth a graceful stop) and
/// removes its folder.
private func stopCeph(_ folder: String) {
    let pids = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/run")) ?? []
    for name in pids where name.hasSuffix(".pid") {
        guard let text = try? String(contentsOfFile: folder + "/run/" + name, encoding: .utf8),
            let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)),
            let command = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
            ["ceph-mon", "ceph-osd", "radosgw"].contains(command.trimmingCharacters(in: .whitespacesAndNewlines))
        else { continue }  // the OSD leaves its pid file behind: only a Ceph daemon is killed
        kill(pid, SIGKILL)
    }
    try? FileManager.default.removeItem(atPath: folder)
    try? FileManager.default.removeItem(atPath: folder + ".log")
}
