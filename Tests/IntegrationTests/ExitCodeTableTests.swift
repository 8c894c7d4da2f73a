import BreezeKit
import Foundation
import Testing

/// The exit-code table of "The breeze command line" (BreezeCommandLine.md), walked: every row
/// has examples here, run as a user would run them, and every example exits as its row says.
@Suite("breeze follows one exit-code table")
struct ExitCodeTableTests {
    static let article = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/FreshAir/FreshAir.docc/BreezeCommandLine.md")

    /// The codes the article's table lists, in its order.
    static func documentedCodes() throws -> [Int32] {
        let text = try String(contentsOf: article, encoding: .utf8)
        let table = try #require(text.components(separatedBy: "### Exit codes").last)
        return table.split(separator: "\n").compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false)
            guard cells.count > 2 else { return nil }
            return Int32(cells[1].trimmingCharacters(in: .whitespaces))
        }
    }

    @Test("Each row's examples exit with its code, and every row has one")
    func walk() async throws {
        let work = try TemporaryFolder("exit-codes")
        let bundle = work.path("site/App.freshair").path
        func run(_ arguments: [String]) async throws -> BreezeBinary.Run {
            try await BreezeBinary.run(arguments, environment: ["HOME": work.path("home").path])
        }
        #expect(try await run(["init", bundle]).status == 0)
        #expect(try await run(["keygen", work.path("publisher.key").path]).status == 0)
        let offline = try LoopbackSocket(listening: false)
        defer { offline.close() }
        try PublishedText.write("{ broken", to: work.path("Broken.freshair/manifest.json"))
        var examples: [(code: Int32, arguments: [String])] = [
            (0, ["validate", bundle]),
            (64, ["help", "nosuch"]),
            (64, ["release", bundle, work.path("out").path, "--rollout", "150"]),
            (64, ["serve", bundle, "--host", "999.1.1.1"]),
            (64, ["rollback", bundle]),
            (65, ["hash", work.path("Broken.freshair").path]),
            (66, ["validate", work.path("nope").path]),
            (73, ["keygen", work.path("publisher.key").path]),
            (73, ["init", bundle]),
            (75, ["sync", "http://127.0.0.1:\(offline.port)/App.freshair/", work.path("live").path]),
            (78, ["publish", bundle, "s3://bucket/app", "--endpoint", "http://127.0.0.1:\(offline.port)/"]),
        ]
        try await PublishedFolder.with(.nginx) { server in
            try FileManager.default.copyItem(
                atPath: bundle,
                toPath: server.root.appendingPathComponent("App.freshair").path
            )
            var tls = URLComponents(url: server.url, resolvingAgainstBaseURL: false)!
            tls.scheme = "https"
            examples += [
                (
                    65,
                    [
                        "sync", server.url.absoluteString + "App.freshair/", work.path("d1").path, "--trusted-key",
                        "TCoja97EGPXN9Izuu1EbJLU0LnSMDMPBKJoGhuOoaP4=",
                    ]
                ),
                (
                    69,
                    ["sync", server.url.absoluteString + "Missing.freshair/", work.path("d2").path, "--attempts", "1"]
                ),
                (69, ["sync", tls.url!.absoluteString + "App.freshair/", work.path("d3").path]),
            ]
            for (code, arguments) in examples {
                let result = try await run(arguments)
                #expect(result.status == code, "breeze \(arguments.joined(separator: " ")): \(result.error)")
                // No internals in any message: no NSError dump, no Swift type name.
                let internals = ["Domain=", "Code=", "UserInfo", "Error.", "Error(", "NSCocoa", "NSPOSIX"]
                #expect(
                    !internals.contains { result.error.contains($0) || result.output.contains($0) },
                    "breeze \(arguments.joined(separator: " ")): \(result.error)"
                )
            }
        }
        // A release works on a scratch copy: its errors name the source's files, not the copy's.
        try PublishedText.write("broken", to: work.path("site/App.freshair/release_notes.json"))
        let broken = try await run(["release", bundle, work.path("out").path, "--key", work.path("publisher.key").path])
        #expect(
            broken.status == 65 && broken.error.contains("App.freshair/release_notes.json: invalid JSON"),
            "\(broken.error)"
        )
        #expect(!broken.error.contains("breeze-release-"), "\(broken.error)")
        try FileManager.default.removeItem(at: work.path("site/App.freshair/release_notes.json"))
        // hash --check after an edit: stale entries (1).
        try PublishedText.write("changed\n", to: work.path("site/App.freshair/en.lproj/Feature.strings"))
        let stale = try await run(["hash", bundle, "--check"])
        #expect(stale.status == 1, "\(stale.error)")
        examples.append((1, ["hash", bundle, "--check"]))
        #expect(
            Set(examples.map(\.code)) == Set(try Self.documentedCodes()),
            "a row without an example, or an example without a row"
        )
    }
}

@Suite("File errors in words")
struct FileErrorWordsTests {
    @Test("Foundation's and the system's file errors name the path and the problem, never the NSError")
    func words() {
        let missing = CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: "/site/re\u{301}sume\u{301}.png"])
        #expect(FileErrorWords.words(missing) == "/site/re\u{301}sume\u{301}.png: no such file or folder")
        #expect(!FileErrorWords.words(missing).contains("\\u{301}"), "a name prints as typed")
        let full = NSError(domain: NSPOSIXErrorDomain, code: Int(ENOSPC), userInfo: [NSFilePathErrorKey: "/d/f"])
        #expect(FileErrorWords.words(full) == "/d/f: the disk is full")
        let other = NSError(domain: NSPOSIXErrorDomain, code: Int(EIO))
        #expect(FileErrorWords.words(other) == "a file: \(String(cString: strerror(EIO)))")
        let hostile = CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: "/x/\u{1B}]0;owned\u{07}"])
        #expect(!FileErrorWords.words(hostile).contains("\u{1B}"), "escapes are shown, not sent to the terminal")
        #expect(FileErrorWords.reason(PublishError("not a file error")) == nil)
    }
}

/// `--json` as documented: each output checked against its schema in docs/json/.
@Suite("breeze's JSON follows the schemas in docs/json")
struct JSONSchemaTests {
    @Test("A checker that cannot fail proves nothing: it catches a missing, an extra and a mistyped member")
    func checkerCatches() throws {
        let error = try JSONSchemaCheck("error.schema.json")
        #expect(error.problems(in: #"{"error": {"code": "usage", "exitStatus": 64, "message": "m"}}"#).isEmpty)
        #expect(
            error.problems(in: #"{"error": {"code": "usage", "exitStatus": 64}}"#) == ["$.error: message is missing"]
        )
        #expect(!error.problems(in: #"{"error": {"code": "usage", "exitStatus": 64, "message": "m", "x": 1}}"#).isEmpty)
        #expect(!error.problems(in: #"{"error": {"code": "usage", "exitStatus": "64", "message": "m"}}"#).isEmpty)
        #expect(!error.problems(in: #"{"error": {"code": "usage", "exitStatus": 2, "message": "m"}}"#).isEmpty)
        let history = try JSONSchemaCheck("history.schema.json")
        let release = #"{"sha256": "a", "signers": [], "files": 1, "bytes": 2, "live": true, "published": "#
        #expect(history.problems(in: "[\(release) \"2026-12-07T20:29:17Z\"}]").isEmpty)
        #expect(!history.problems(in: "[\(release) 818000000}]").isEmpty, "seconds since 2001 are not a date")
    }

    @Test("release, status, history, sync and failures, run as a user would, match their schemas")
    func outputs() async throws {
        let work = try TemporaryFolder("json-schemas")
        let bundle = work.path("site/App.freshair").path
        let destination = work.path("published").path
        func run(_ arguments: [String]) async throws -> BreezeBinary.Run {
            try await BreezeBinary.run(arguments + ["--json"], environment: ["HOME": work.path("home").path])
        }
        #expect(try await BreezeBinary.run(["init", bundle]).status == 0)
        #expect(try await BreezeBinary.run(["keygen", work.path("k.key").path]).status == 0)
        #expect(try await run(["release", bundle, destination, "--key", work.path("k.key").path]).status == 0)
        for (file, arguments) in [
            ("status.schema.json", ["status", destination]),
            ("history.schema.json", ["history", destination]),
            ("sync.schema.json", ["sync", destination, work.path("device").path]),
            ("sync.schema.json", ["sync", destination, work.path("device").path]),
            ("error.schema.json", ["validate", work.path("nope").path]),
            ("error.schema.json", ["help", "nosuch"]),
            ("error.schema.json", ["release", bundle, destination, "--rollout", "150"]),
            (
                "error.schema.json",
                [
                    "sync", destination, work.path("other").path, "--trusted-key",
                    "TCoja97EGPXN9Izuu1EbJLU0LnSMDMPBKJoGhuOoaP4=",
                ]
            ),
        ] {
            let result = try await run(arguments)
            let problems = try JSONSchemaCheck(file).problems(in: result.output)
            #expect(problems.isEmpty, "breeze \(arguments.joined(separator: " ")) against \(file): \(problems)")
        }
        let synced = try await run(["sync", destination, work.path("device").path])
        #expect(synced.output.contains("\"releaseSequence\" : 1"), "support can tell which release a device runs")
    }

    @Test("Every other command's --json, run as an author would, matches its schema")
    func everyCommand() async throws {
        let work = try TemporaryFolder("json-every")
        let bundle = work.path("App.freshair").path
        let key = work.path("k.key").path
        let destination = work.path("published/App.freshair").path
        var runs: [(String, [String], Int32)] = [
            ("init.schema.json", ["init", bundle], 0),
            ("keygen.schema.json", ["keygen", key], 0),
            ("hash.schema.json", ["hash", bundle, "--check"], 0),
            ("generate.schema.json", ["generate", bundle], 0),
            ("sign.schema.json", ["sign", bundle, "--key", key], 0),
            ("validate.schema.json", ["validate", bundle], 0),
            ("plan.schema.json", ["plan", bundle, "--env", "platform=iOS", "--env", "displayScale=3"], 0),
            ("whatsnew.schema.json", ["whatsnew", bundle, "--from", "0.9", "--to", "2.0"], 0),
            ("check-update.schema.json", ["check-update", bundle, "--app-version", "0.9"], 0),
            (
                "preview.schema.json",
                ["preview", bundle, "--from", "0.9", "--to", "2.0", "--output", work.path("p.html").path], 0
            ),
            ("package.schema.json", ["package", bundle, "--output", work.path("c.tgz").path], 0),
            ("repo-add.schema.json", ["repo", "add", bundle, work.path("repo/com.example").path, "--name", "cats"], 0),
            ("keys.schema.json", ["keys", "create", work.path("keys/1.json").path, "--key", key], 0),
            ("publish.schema.json", ["publish", bundle, work.path("plain").path], 0),
            ("release.schema.json", ["release", bundle, destination, "--key", key, "--dry-run"], 0),
            ("release.schema.json", ["release", bundle, destination, "--key", key], 0),
        ]
        for (file, arguments, status) in runs {
            let result = try await BreezeBinary.run(arguments + ["--json"])
            #expect(result.status == status, "breeze \(arguments.joined(separator: " ")): \(result.error)")
            let problems = try JSONSchemaCheck(file).problems(in: result.output)
            #expect(problems.isEmpty, "breeze \(arguments.joined(separator: " ")) against \(file): \(problems)")
        }
        // A device on the first release, then a second release to sync, revert and roll back.
        let device = work.path("device").path
        #expect(try await BreezeBinary.run(["sync", destination, device]).status == 0)
        try Data("new".utf8).write(to: URL(fileURLWithPath: bundle + "/new.txt"))
        #expect(try await BreezeBinary.run(["release", bundle, destination, "--key", key]).status == 0)
        #expect(try await BreezeBinary.run(["sync", destination, device]).status == 0)
        runs = [
            ("revert.schema.json", ["revert", destination, "--key", key], 0),
            ("verify.schema.json", ["verify", device], 0),
            ("rollback.schema.json", ["rollback", device], 0),
        ]
        for (file, arguments, status) in runs {
            let result = try await BreezeBinary.run(arguments + ["--json"])
            #expect(result.status == status, "breeze \(arguments.joined(separator: " ")): \(result.error)")
            let problems = try JSONSchemaCheck(file).problems(in: result.output)
            #expect(problems.isEmpty, "breeze \(arguments.joined(separator: " ")) against \(file): \(problems)")
        }

        // A release stopped by validation lists its problems as validate does, not in one string.
        try FileManager.default.removeItem(atPath: bundle + "/en.lproj/Feature.strings")
        let stopped = try await BreezeBinary.run(["release", bundle, destination, "--key", key, "--json"])
        #expect(stopped.status == 65)
        #expect(try JSONSchemaCheck("error.schema.json").problems(in: stopped.output).isEmpty)
        let error = try JSONSerialization.jsonObject(with: Data(stopped.output.utf8)) as? [String: [String: Any]]
        let listed = error?["error"]?["problems"] as? [[String: Any]] ?? []
        #expect(listed.count == 2 && listed.allSatisfy { $0["file"] as? String == "en.lproj/Feature.strings" })
    }

    @Test("Every command that takes --json has a schema in docs/json, and every schema a command")
    func everyCommandHasASchema() async throws {
        // The names a help lists under its SUBCOMMANDS headings ("  init    Write…").
        func subcommands(_ help: String) -> [String] {
            guard let start = help.range(of: "SUBCOMMANDS:") else { return [] }
            return help[start.lowerBound...].split(separator: "\n").compactMap { line in
                guard line.hasPrefix("  "), !line.dropFirst(2).hasPrefix(" ") else { return nil }
                return line.split(separator: " ").first.map(String.init)
            }
        }
        var commands: [String] = []
        for name in subcommands(try await BreezeBinary.run(["--help"]).output) where name != "help" {
            let help = try await BreezeBinary.run([name, "--help"]).output
            let nested = subcommands(help)
            for sub in nested where try await BreezeBinary.run([name, sub, "--help"]).output.contains("--json") {
                commands.append(name == "keys" ? "keys" : "\(name)-\(sub)")  // keys create and rotate print one shape
            }
            if nested.isEmpty, help.contains("--json") { commands.append(name) }
        }
        let schemas = try FileManager.default.contentsOfDirectory(atPath: JSONSchemaCheck.folder.path)
            .filter { $0.hasSuffix(".schema.json") }.map { String($0.dropLast(".schema.json".count)) }
        #expect(commands.count > 15, "the help was read: \(commands)")
        #expect(
            Set(commands) == Set(schemas).subtracting(["error"]),
            "commands \(commands.sorted()), schemas \(schemas.sorted())"
        )
    }
}
