import Foundation
import Testing

/// `Benchmarks/fleet.py --quick`: 100 devices with their own stores, through an nginx cache in
/// front of a Ceph cluster of its own, while v2 is released; measured from the logs of the cache
/// and of radosgw. The full run (1,000 devices, radosgw killed for 20 s) is `Benchmarks/run --fleet`.
@Suite("A fleet through a cache in front of Ceph")
struct FleetTests {
    @Test(
        "100 devices converge on v2, verified; a no-change check is one request; the object layout never fails",
        .timeLimit(.minutes(5))
    )
    func quickFleet() async throws {
        for binary in ["ceph-mon", "ceph-osd", "radosgw", "uuidgen"] where !CephGateway.isInstalled(binary) {
            throw TestSetupError("\(binary) is not installed: run scripts/test, which installs Ceph")
        }
        let work = try TemporaryFolder("fleet")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let devicesBinary =
            ProcessInfo.processInfo.environment["FLEET_DEVICES_BIN"]
            ?? root.appendingPathComponent(".build/debug/FleetDevices").path
        guard FileManager.default.isExecutableFile(atPath: devicesBinary) else {
            throw TestSetupError("FleetDevices is not built: run scripts/test (it builds it)")
        }
        // Output to files, not to this process's pipe, which the daemons it starts could hold open.
        try await shell(
            "/usr/bin/python3 '\(root.path)/Benchmarks/fleet.py' --quick --no-model --json "
                + "--breeze '\(try BreezeBinary.path)' --devices-binary '\(devicesBinary)' "
                + "> result.json 2> fleet.log || { cat fleet.log; exit 1; }",
            in: work.url
        )
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: work.path("result.json")))
        let results = try #require((json as? [String: Any])?["results"] as? [[String: Any]])
        #expect(results.map { $0["layout"] as? String } == ["paths", "objects"])
        for result in results {
            let layout = result["layout"] as? String ?? "?"
            let number = { (key: String) in (result[key] as? NSNumber)?.doubleValue ?? -1 }
            #expect(
                number("devices on v2 and intact") == 100,
                "\(layout): \(result["devices not on v2 or damaged"] ?? "")"
            )
            // Every check that found nothing new was one request in the cache's own log.
            #expect(number("no-change checks") > 100, "\(layout)")
            #expect(
                number("no-change checks of exactly one request (cache log)") == number("no-change checks"),
                "\(layout)"
            )
            // The cache carries the fleet: well under one origin request per check.
            #expect((0..<0.5).contains(number("origin requests per device-check")), "\(layout)")
            #expect(number("cache hit ratio (devices)") > 0.9, "\(layout)")
            if layout == "objects" {
                // Named by their bytes, objects never change under a manifest: no sync fails.
                #expect(number("failed checks") == 0, "\(result["failures"] ?? "")")
            }
        }
    }
}
