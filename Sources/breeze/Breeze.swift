import ArgumentParser
import BreezeKit
import CSystemCalls
import Foundation

/// `breeze`: author, check, serve and sync FreshAir content.
@main
struct Breeze: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "breeze",
        abstract: "Keep app content current from static hosting: sync, serve and check FreshAir bundles.",
        discussion: """
            Exit codes (sysexits): 0 success (updated or already current, valid, nothing stale); \
            1 validate found errors, hash --check stale entries, verify damage, or another failure; \
            64 usage (unknown command or option, a value out of range); 65 invalid content (manifest, \
            digest, size, signature); 66 no such file or folder; 69 the server answered an error or must \
            change (redirect, TLS): trying again cannot help; 73 cannot write (store locked, folder \
            occupied, an existing key or bundle never overwritten); 75 temporary (network, a release \
            that lost a race): run it again; 78 configuration (credentials, endpoint, a rollout in the way).
            """,
        version: BreezeVersion.current,
        groupedSubcommands: [
            // By task, in the order an author meets them.
            CommandGroup(
                name: "Author content",
                subcommands: [
                    InitCommand.self, GenerateCommand.self, HashCommand.self, ValidateCommand.self,
                    PackageCommand.self, RepositoryCommand.self,
                ]
            ),
            CommandGroup(name: "Sign", subcommands: [KeygenCommand.self, KeysCommand.self, SignCommand.self]),
            CommandGroup(
                name: "Publish and serve",
                subcommands: [
                    ReleaseCommand.self, StatusCommand.self, HistoryCommand.self, RevertCommand.self,
                    PublishCommand.self, ServeCommand.self,
                ]
            ),
            CommandGroup(
                name: "Preview what a device sees",
                subcommands: [PlanCommand.self, WhatsNewCommand.self, CheckUpdateCommand.self, PreviewCommand.self]
            ),
            CommandGroup(
                name: "On a device",
                subcommands: [SyncCommand.self, VerifyCommand.self, RollbackCommand.self, DemoCommand.self]
            ),
        ]
    )
}

extension Breeze {
    /// Runs the chosen command; a ``CommandFailure`` prints one line and exits with its code.
    static func main() async {
        // glibc gives threads that allocate at once arenas of their own (up to 8 per core),
        // and what is freed stays in each: a 100,000-file sync held 17 MB more at its peak.
        // Two arenas cost it no measurable time (15.8-16.2 s either way).
        freshair_limit_malloc_arenas(2)
        // A large table (the manifest's 14 MB, a list of 100,000 entries) freed after the walk
        // raised glibc's threshold past the next ones, which then came from the heap and left
        // holes in it: a 100,000-file sync peaked at 84-86 MB, 73 MB with the threshold fixed
        // at 2 MB (buffers of 1 MB stay in the heap, reused). That leaves the trim threshold at
        // 128 KB: while the transport copied every body chunk into an array, a 1 GB sync gave the
        // heap's top back and took it again about a thousand times (a trim threshold of 4 MB
        // saved 0.1 s).
        freshair_fix_mmap_threshold(2 << 20)
        // Reads of up to 512 KB (`ReadSizing`), freed at a heap's top, gave it back and faulted it
        // in again: a 1 GB sync made about 400 madvise calls and 40,000-63,000 page faults (1 and
        // 2,200 with 4 MB kept). Measured on the 1 MB read budget, the same binary with and
        // without (glibc's tunable), medians: 1 GB 1.425 -> 1.310 s, the repository of four
        // packages 2.35 -> 2.26 s at 33.3 -> 33.5 MB; 16 x 64 MB, the package and 10,000 files no
        // slower; every peak within 0.6 MB. (On the 2 MB budget it took the repository to 40.7 MB.)
        freshair_set_trim_threshold(4 << 20)
        if let typo = UnknownCommand(Array(CommandLine.arguments.dropFirst())) {
            FileHandle.standardError.write(Data("breeze: error: \(typo)\n".utf8))
            if JSONError.requested { JSONError(message: "\(typo)", exitStatus: 64).print() }
            Foundation.exit(64)
        }
        if let mistake = VersionValueMistake(Array(CommandLine.arguments.dropFirst())) {
            FileHandle.standardError.write(Data("breeze: error: \(mistake)\n".utf8))
            if JSONError.requested { JSONError(message: "\(mistake)", exitStatus: 64).print() }
            Foundation.exit(64)
        }
        var command: any ParsableCommand
        do { command = try parseAsRoot() } catch { fail(error) }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let failure as CommandFailure {
            if JSONError.requested { failure.json.print() }
            failure.exit()
        } catch let invalid as ValidationError {
            // An option checked only once the command runs (a key, a header, a certificate).
            // ArgumentParser would print the root's usage with it: the command's is the one
            // that helps.
            let text = """
                Error: \(invalid.message)
                Usage: \(usageString(for: type(of: command)))
                  See '\(path(to: type(of: command)).joined(separator: " ")) --help' for more information.

                """
            FileHandle.standardError.write(Data(text.utf8))
            if JSONError.requested { JSONError(message: invalid.message, exitStatus: 64).print() }
            Foundation.exit(ExitCode.validationFailure.rawValue)
        } catch {
            fail(error)
        }
    }

    /// The names from `breeze` down to `command` (`["breeze", "keys", "create"]`).
    static func path(
        to command: any ParsableCommand.Type,
        from root: any ParsableCommand.Type = Breeze.self
    )
        -> [String]
    {
        let name = root.configuration.commandName ?? "breeze"
        if root == command { return [name] }
        for child in root.configuration.subcommands {
            let below = path(to: command, from: child)
            if !below.isEmpty { return [name] + below }
        }
        return []
    }

    /// ArgumentParser's own: usage errors, --help and --version (exit 0, nothing to report),
    /// and a command's deliberate exit status, whose report it has already printed.
    private static func fail(_ error: any Error) -> Never {
        let status = exitCode(for: error).rawValue
        if JSONError.requested, status != 0, !(error is ExitCode) {
            JSONError(message: message(for: error), exitStatus: status).print()
        }
        exit(withError: error)
    }
}

/// A first argument that names no subcommand (or `help` followed by one): answered with the
/// nearest names, where ArgumentParser would say "3 unexpected arguments", or print the root's
/// help and exit 0 for `breeze help nosuch`.
struct UnknownCommand: CustomStringConvertible {
    let word: String
    let suggestions: [String]

    init?(_ arguments: [String]) {
        let asked = arguments.first == "help" ? arguments.dropFirst().first : arguments.first
        guard let argument = asked, !argument.hasPrefix("-") else { return nil }
        let names = Breeze.configuration.subcommands.compactMap { $0.configuration.commandName }
        guard !names.contains(argument), argument != "help" else { return nil }
        word = argument
        let distances = names.map { ($0, Self.distance(argument.lowercased(), $0)) }
        let best = distances.map(\.1).min() ?? .max
        suggestions = best <= max(1, argument.count / 3) ? distances.filter { $0.1 == best }.map(\.0) : []
    }

    var description: String {
        let hint =
            suggestions.isEmpty ? "" : "; did you mean \(suggestions.map { "'\($0)'" }.joined(separator: " or "))?"
        return "'\(word)' is not a breeze command\(hint) (`breeze --help` lists them)"
    }

    /// Levenshtein distance, on characters: names are short.
    static func distance(_ a: String, _ b: String) -> Int {
        let (a, b) = (Array(a), Array(b))
        var row = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return a.isEmpty ? b.count : row[b.count]
    }
}

/// `breeze check-update C --version 0.9`: ArgumentParser answers `--version` anywhere with
/// breeze's own version and exit 0, so the check a script meant never ran and nothing said so.
/// A `--version` given a value after a command is refused, with the option that command takes.
struct VersionValueMistake: CustomStringConvertible {
    let command: String
    let value: String

    init?(_ arguments: [String]) {
        guard let command = arguments.first, !command.hasPrefix("-"),
            let position = arguments.firstIndex(where: { $0 == "--version" || $0.hasPrefix("--version=") })
        else { return nil }
        let flag = arguments[position]
        if flag.hasPrefix("--version=") {
            value = String(flag.dropFirst("--version=".count))
        } else if position + 1 < arguments.count, arguments[position + 1].first?.isNumber == true {
            value = arguments[position + 1]
        } else {
            return nil
        }
        self.command = command
    }

    var description: String {
        let instead =
            switch command {
            case "check-update": "the app's version is --app-version \(value)"
            case "whatsnew": "the versions a user upgrades between are --from VERSION --to VERSION"
            case "sync", "plan": "a device's app version is --env appVersion=\(value)"
            default: "it takes no value"
            }
        return "--version prints breeze's own version; \(instead) (`breeze \(command) --help` lists the options)"
    }
}
