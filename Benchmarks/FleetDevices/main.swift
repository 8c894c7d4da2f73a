import AsyncHTTPClient
import Foundation
import FreshAir
import FreshAirAsyncHTTPClient
import NIOCore
import NIOHTTP1
import Synchronization

// The devices of `Benchmarks/fleet`: many apps in one process, each with its own store, checking
// one bundle through a cache on a compressed clock. Each FreshAir device is a real `BundleSync`
// with its own `BundleStore`; a naive device downloads the whole manifest and every file at
// every check, as a client without conditional requests or digests would. Each device names
// itself in `User-Agent` (`fleet-device/N`, `fleet-naive/N`), so the cache's log tells them apart.
//
//     FleetDevices --url URL [--naive-url URL] --devices N --naive N --interval S --jitter F
//                  --duration S --stores DIR --key BASE64 --events FILE [--seed N]
//
// Every check is one line of FILE (JSON): device, kind, start and end (seconds from the start),
// outcome, requests, the live release's sequence after it, and the error when it failed. The
// last line is the run's summary: every FreshAir device's final sequence and whether its store
// verifies intact, the process's peak RSS, and the wall time (Unix seconds) its clock started.

struct Options {
    var url = URL(string: "http://127.0.0.1:8080/")!
    /// Where naive devices check (another cache in front of the same origin, so that the
    /// origin requests each kind causes can be told apart); `nil`: `url`.
    var naiveURL: URL?
    var devices = 100
    var naive = 0
    var interval = 10.0
    var jitter = 0.2
    var duration = 30.0
    var stores = URL(fileURLWithPath: NSTemporaryDirectory() + "fleet-stores")
    var key = ""
    var events = URL(fileURLWithPath: "fleet-events.jsonl")
    var seed: UInt64 = 1

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        while let name = rest.popFirst() {
            guard let value = rest.popFirst() else { throw Usage("\(name) needs a value") }
            switch name {
            case "--url": url = URL(string: value.hasSuffix("/") ? value : value + "/")!
            case "--naive-url": naiveURL = URL(string: value.hasSuffix("/") ? value : value + "/")!
            case "--devices": devices = Int(value) ?? devices
            case "--naive": naive = Int(value) ?? naive
            case "--interval": interval = Double(value) ?? interval
            case "--jitter": jitter = Double(value) ?? jitter
            case "--duration": duration = Double(value) ?? duration
            case "--stores": stores = URL(fileURLWithPath: value)
            case "--key": key = value
            case "--events": events = URL(fileURLWithPath: value)
            case "--seed": seed = UInt64(value) ?? seed
            default: throw Usage("unknown option \(name)")
            }
        }
    }
}

struct Usage: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// One check, as a line of the events file.
struct Check: Codable, Sendable {
    var device: Int
    /// The check's number on its device, sent in its requests' User-Agent (`… check/N`), so that
    /// the cache's log is matched to checks by request, not by time.
    var number: Int
    var kind: String
    var start: Double
    var end: Double
    var outcome: String
    var requests: Int
    var sequence: Int?
    var error: String?
}

/// Where every device ended, and what the process cost.
struct Summary: Codable, Sendable {
    struct Device: Codable, Sendable {
        var device: Int
        var sequence: Int?
        var intact: Bool
        var problem: String?
    }
    var summary = true
    var devices: [Device]
    var peakRSSBytes: Int64
    var seconds: Double
    var startedAt: Double
}

/// A small deterministic generator, so a seed gives the same schedule.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The sequence of the release live in `store`, read from its root manifest.
func liveSequence(_ store: BundleStore) -> Int? {
    guard let live = store.liveDirectory,
        let data = try? Data(contentsOf: live.appendingPathComponent("manifest.json")),
        let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    else { return nil }
    return json["sequence"] as? Int
}

/// The largest resident set this process has had (`VmHWM`).
func peakRSS() -> Int64 {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
    else { return 0 }
    return (Int64(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
}

/// A client without conditional requests or digests: the whole manifest, then every file.
func naiveCheck(_ client: HTTPClient, base: URL, agent: String) async throws -> Int {
    func get(_ url: URL) async throws -> ByteBuffer {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.headers.add(name: "User-Agent", value: agent)
        let response = try await client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 64 << 20)
        guard response.status == .ok else { throw Usage("HTTP \(response.status.code) for \(url.lastPathComponent)") }
        return body
    }
    let manifest = try await get(base.appendingPathComponent("manifest.json"))
    guard let root = try JSONSerialization.jsonObject(with: Data(manifest.readableBytesView)) as? [String: Any],
        let files = root["files"] as? [[String: Any]]
    else { throw Usage("manifest.json is not a root manifest") }
    let objects = root["layout"] as? String == "objects" ? (root["objects"] as? String ?? "objects/") : nil
    for file in files {
        guard let name = file["filename"] as? String else { continue }
        let path = objects.map { $0 + (file["sha"] as? String ?? "") } ?? name
        _ = try await get(URL(string: path, relativeTo: base)!.absoluteURL)
    }
    return 1 + files.count
}

let options: Options
do { options = try Options(Array(CommandLine.arguments.dropFirst())) } catch {
    FileHandle.standardError.write(Data("FleetDevices: \(error)\n".utf8))
    exit(64)
}
let key: TrustedKey
do { key = try TrustedKey(base64: options.key) } catch {
    FileHandle.standardError.write(Data("FleetDevices: --key: \(error)\n".utf8))
    exit(64)
}

// One connection pool for the process, as one host's apps would not share, but a cache sees
// the same requests either way; enough connections that devices never queue behind each other.
let transport = AsyncHTTPClientTransport(
    connectionsPerHost: 256,
    connectTimeout: .seconds(2),
    idleTimeout: .seconds(10)
)
let naiveClient = HTTPClient(
    eventLoopGroupProvider: .singleton,
    configuration: AsyncHTTPClientTransport.configuration(
        connectionsPerHost: 64,
        connectTimeout: .seconds(2),
        idleTimeout: .seconds(10)
    )
)
let clock = ContinuousClock()
let started = clock.now
let startedAt = Date().timeIntervalSince1970
func elapsed() -> Double {
    let (seconds, attoseconds) = (clock.now - started).components
    return Double(seconds) + Double(attoseconds) / 1e18
}
let checks = Mutex<[Check]>([])
var generator = SplitMix(state: options.seed)
// Each device's first check somewhere in the first interval, as apps started at random times.
let schedules: [[Double]] = (0..<(options.devices + options.naive)).map { _ in
    var times: [Double] = []
    var next = Double.random(in: 0..<options.interval, using: &generator)
    while next < options.duration {
        times.append(next)
        next += options.interval * (1 + Double.random(in: -options.jitter...options.jitter, using: &generator))
    }
    return times
}

func store(_ device: Int) -> BundleStore {
    BundleStore(root: options.stores.appendingPathComponent("device-\(device)"))
}

func runDevice(_ device: Int) async {
    let naive = device >= options.devices
    let agent = naive ? "fleet-naive/\(device)" : "fleet-device/\(device)"
    var configuration = SyncConfiguration()
    configuration.trustedKeys = [key]
    configuration.headers = [("User-Agent", agent)]
    configuration.retry = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(500), maximumDelay: .seconds(1))
    configuration.requestTimeout = .seconds(10)
    let store = store(device)
    var sync = BundleSync(
        remote: options.url,
        store: store,
        transport: Transport(transport),
        configuration: configuration
    )
    for (number, time) in schedules[device].enumerated() {
        try? await Task.sleep(until: started + .milliseconds(Int64(time * 1000)), clock: clock)
        let start = elapsed()
        sync.configuration.headers = [("User-Agent", "\(agent) check/\(number)")]
        var check = Check(
            device: device,
            number: number,
            kind: naive ? "naive" : "freshair",
            start: start,
            end: 0,
            outcome: "",
            requests: 0
        )
        do {
            if naive {
                check.requests = try await naiveCheck(naiveClient, base: options.naiveURL ?? options.url, agent: agent)
                check.outcome = "downloaded"
            } else {
                let summary = try await sync.run()
                check.requests = summary.requests
                check.outcome = summary.notModified ? "notModified" : summary.outcome.rawValue
            }
        } catch {
            check.outcome = "failed"
            check.error = "\(error)"
        }
        // The check ends when the sync returns: reading the live sequence back for the report
        // parses the whole manifest (Foundation's JSONSerialization), which an app never does.
        check.end = elapsed()
        if !naive { check.sequence = liveSequence(store) }
        checks.withLock { $0.append(check) }
    }
}

// Progress on standard error every 10 s: checks done and how many failed.
let reporter = Task {
    while !Task.isCancelled {
        try? await Task.sleep(for: .seconds(10))
        let (done, failed, last) = checks.withLock {
            ($0.count, $0.filter { $0.outcome == "failed" }.count, $0.last { $0.outcome == "failed" }?.error)
        }
        let line = String(format: "FleetDevices: %.0f s, %d checks, %d failed", elapsed(), done, failed)
        FileHandle.standardError.write(Data((line + (last.map { " (the last: \($0))" } ?? "") + "\n").utf8))
    }
}
await withTaskGroup(of: Void.self) { group in
    for device in 0..<(options.devices + options.naive) {
        group.addTask { await runDevice(device) }
    }
}
reporter.cancel()

let finals = (0..<options.devices).map { device -> Summary.Device in
    let store = store(device)
    do {
        let report = try store.verify()
        return Summary.Device(
            device: device,
            sequence: liveSequence(store),
            intact: report?.isIntact ?? false,
            problem: report.map { $0.isIntact ? nil : $0.oneLine } ?? "nothing installed"
        )
    } catch {
        return Summary.Device(device: device, sequence: liveSequence(store), intact: false, problem: "\(error)")
    }
}
let encoder = JSONEncoder()
encoder.outputFormatting = [.sortedKeys]
var lines = Data()
for check in checks.withLock({ $0 }).sorted(by: { $0.start < $1.start }) {
    lines.append(try encoder.encode(check))
    lines.append(UInt8(ascii: "\n"))
}
lines.append(
    try encoder.encode(Summary(devices: finals, peakRSSBytes: peakRSS(), seconds: elapsed(), startedAt: startedAt))
)
lines.append(UInt8(ascii: "\n"))
try lines.write(to: options.events)
try? await naiveClient.shutdown().get()
