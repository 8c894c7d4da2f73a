import Foundation
import Testing

@Suite("A Mac or iOS app's limit of 256 open files")
struct OpenFileLimitTests {
    @Test(
        "300 folders sync under `ulimit -n 256`: 64 folders kept open, the least recently used closed, each opened about once"
    )
    func manyFoldersUnderTheAppleLimit() async throws {
        try DurabilityTests.requireStrace()
        try await PublishedFolder.with(.nginx) { server in
            let bundle = server.root.appendingPathComponent("Wide.freshair")
            for index in 0..<300 {
                let folder = bundle.appendingPathComponent(String(format: "d%03d", index))
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                for name in ["a.txt", "b.txt"] {
                    try Data("\(name) \(index)\n".utf8).write(to: folder.appendingPathComponent(name))
                }
            }
            try await BreezeBinary.run(["generate", bundle.path]).expectSuccess()
            let local = try TemporaryFolder("open-file-limit")
            let url = server.url.appendingPathComponent("Wide.freshair/").absoluteString
            // 256 is where a Mac app starts (Technical Q&A QA1005); iOS apps start as low.
            let output = try await shell(
                "ulimit -n 256 && strace -f -qq -z -e trace=openat,openat2 -o trace.txt '\(try BreezeBinary.path)' sync '\(url)' '\(local.path("live").path)' --concurrency 1 --pipeline 1 2>&1; echo \"exit $?\"",
                in: local.url
            )
            #expect(output.hasPrefix("Updated to version 1: 601 downloaded"), "\(output)")
            #expect(output.hasSuffix("exit 0\n"), "\(output)")
            #expect(local.path("live/d299/b.txt").text == "b.txt 299\n")
            // Opens of a dNNN folder (`-z`: those that succeeded, each on one line), one download
            // at a time: two at once may both open a new folder, and one keeps it. Past a cap
            // that took no more folders, each file opened its own: 64 + 236 × 2.
            let folderOpens = (local.path("trace.txt").text ?? "").split(separator: "\n").filter { line in
                line.contains("O_DIRECTORY") && line.range(of: #"\"d\d{3}\""#, options: .regularExpression) != nil
            }
            #expect(folderOpens.count >= 300 && folderOpens.count <= 310, "\(folderOpens.count) opens of 300 folders")
        }
    }
}
