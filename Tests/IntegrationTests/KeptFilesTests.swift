import BreezeKit
import Foundation
import Testing

@Suite("An update links its unchanged files from the live version")
struct KeptFilesTests {
    @Test("strace: each kept file is linked by its last name between two open folders, never by a path from /")
    func keptFilesAreLinkedByName() async throws {
        try DurabilityTests.requireStrace()
        try await PublishedFolder.with(.nginx) { server in
            let local = try TemporaryFolder("kept")
            let live = local.path("live").path
            let url = server.url.appendingPathComponent(ExampleBundle.name + "/").absoluteString
            let sync =
                "'\(try BreezeBinary.path)' sync '\(url)' '\(live)' --env appVersion=0.9 --env platform=iOS --env systemVersion=9.0"
            try ExampleBundle.write(in: server.root)
            try await shell(sync, in: local.url)
            let before = try FileManager.default.attributesOfItem(
                atPath: local.path("live/Embed1.freshair/bar.md").path
            )

            try ExampleBundle.write(in: server.root, overrides: ["Embed1.freshair/foo.md": "edited\n"])
            let output = try await shell("strace -f -qq -e trace=link,linkat -o trace.txt " + sync, in: local.url)
            #expect(output.hasPrefix("Updated to version 2"), "\(output)")
            let links = DurabilityTests.calls(local.path("trace.txt").text ?? "").filter { $0.call.hasPrefix("link") }
            #expect(links.count == 1, "bar.md is the one file kept: \(links)")
            for link in links {
                #expect(link.call == "linkat" && link.arguments.count == 5, "\(link)")
                #expect(!link.arguments.contains("AT_FDCWD"), "\(link)")
                #expect(link.arguments[1] == "bar.md" && link.arguments[3] == "bar.md", "\(link)")
            }
            let after = try FileManager.default.attributesOfItem(atPath: local.path("live/Embed1.freshair/bar.md").path)
            #expect(after[.systemFileNumber] as? Int == before[.systemFileNumber] as? Int, "the same file, linked")
            #expect(local.path("live/Embed1.freshair/foo.md").text == "edited\n")
        }
    }
}
