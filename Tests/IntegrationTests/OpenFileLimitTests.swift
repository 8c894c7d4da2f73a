import Foundation
import Testing

@Suite("A Mac or iOS app's limit of 256 open files")
struct OpenFileLimitTests {
    @Test("A bundle of 300 folders syncs under `ulimit -n 256`: folders kept open leave room for files and connections")
    func manyFoldersUnderTheAppleLimit() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = server.root.appendingPathComponent("Wide.freshair")
            for index in 0..<300 {
                let folder = bundle.appendingPathComponent(String(format: "d%03d", index))
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try Data("file \(index)\n".utf8).write(to: folder.appendingPathComponent("f.txt"))
            }
            try await BreezeBinary.run(["generate", bundle.path]).expectSuccess()
            let local = try TemporaryFolder("open-file-limit")
            let url = server.url.appendingPathComponent("Wide.freshair/").absoluteString
            // 256 is where a Mac app starts (Technical Q&A QA1005); iOS apps start as low.
            let output = try await shell(
                "ulimit -n 256 && '\(try BreezeBinary.path)' sync '\(url)' '\(local.path("live").path)' 2>&1; echo \"exit $?\"",
                in: local.url
            )
            #expect(output.hasPrefix("Updated to version 1: 301 downloaded"), "\(output)")
            #expect(output.hasSuffix("exit 0\n"), "\(output)")
            #expect(local.path("live/d299/f.txt").text == "file 299\n")
        }
    }
}
