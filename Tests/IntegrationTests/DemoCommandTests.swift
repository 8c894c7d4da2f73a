import Foundation
import Testing

@Suite("breeze demo cleans up after itself")
struct DemoCommandTests {
    @Test("The demo's temporary folder is removed at the end, and one a killed demo left is removed by the next")
    func removesItsFolder() async throws {
        let temporary = try TemporaryFolder("demo-tmp")
        // A folder an interrupted demo left: its process (no pid is this high) is gone.
        let abandoned = temporary.path("freshair-demo-2147483000-ABCD1234")
        try FileManager.default.createDirectory(at: abandoned, withIntermediateDirectories: true)
        let kept = temporary.path("freshair-demo-\(getpid())-KEEP0000")  // a live process's
        try FileManager.default.createDirectory(at: kept, withIntermediateDirectories: true)
        let run = try await BreezeBinary.run(["demo"], environment: ["TMPDIR": temporary.url.path])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.contains("temporary folder is removed"))
        let left = try FileManager.default.contentsOfDirectory(atPath: temporary.url.path)
        #expect(left == ["freshair-demo-\(getpid())-KEEP0000"], "\(left)")
    }
}
