import ArgumentParser
import BreezeKit
import Foundation
import FreshAir

/// Options shared by the commands that read a content folder as a device would.
struct ContentOptions: ParsableArguments {
    @Argument(help: "The content folder (a synced DIR, or a bundle being authored).", completion: .file())
    var bundle: String

    @Option(help: "The device's locale, e.g. fr_FR.")
    var locale: String?

    @Option(
        name: .customLong("env"),
        help: ArgumentHelp("Set a condition key, e.g. --env systemVersion=9.0.", valueName: "KEY=VALUE")
    )
    var environment: [String] = []

    func environment(appVersion: String?) throws -> ConditionEnvironment {
        var base = ConditionEnvironment.current(appVersion: appVersion)
        if let locale { base["locale"] = .string(locale) }
        return try EnvironmentOptions.apply(environment, to: base)
    }

    func contentBundle(_ environment: ConditionEnvironment) throws -> ContentBundle {
        try CommandFailure.requireFolder(bundle)
        let root = URL(fileURLWithPath: bundle)
        guard
            FileManager.default.fileExists(atPath: root.appendingPathComponent("release_notes.json").path)
                || FileManager.default.fileExists(
                    atPath: root.appendingPathComponent("Resources/release_notes.json").path
                )
        else { throw ValidationError("\(root.path) has no release_notes.json.") }
        return ContentBundle(root: root.resolvingSymlinksInPath(), environment: environment)
    }

    /// The features a user upgrading from `from` to `to` sees on this device.
    /// The releases after `from` through `to` this environment leaves out, and why.
    func releasesLeftOut(
        after from: Version,
        through to: Version,
        appVersion: String
    ) throws -> [(
        version: Version, reason: String
    )] {
        let environment = try environment(appVersion: appVersion)
        do {
            let notes = try contentBundle(environment).releaseNotes()
            return notes?.releasesLeftOut(after: from, through: to, environment: environment) ?? []
        } catch { throw CommandFailure(error) }
    }

    /// Names on standard error the releases an environment left out, with a way to include them.
    static func report(_ leftOut: [(version: Version, reason: String)]) {
        guard !leftOut.isEmpty else { return }
        let lines = leftOut.map { "  \($0.version): \($0.reason)" }.joined(separator: "\n")
        TerminalText.writeError(
            "Left out by this environment (set keys with --env KEY=VALUE, e.g. --env systemVersion=17.0):\n\(lines)"
        )
    }

    func features(from: String, to: String) throws -> [Feature] {
        let environment = try environment(appVersion: to)
        do {
            return try contentBundle(environment).whatsNew(
                from: try parseVersion(from, "--from"),
                to: try parseVersion(to, "--to"),
                environment: environment
            )
        } catch let error as ValidationError { throw error } catch { throw CommandFailure(error) }
    }
}

func parseVersion(_ text: String, _ option: String) throws -> Version {
    guard let version = Version(text) else {
        throw ValidationError("\(option) takes a version such as 1.2, got '\(text)'.")
    }
    return version
}

struct WhatsNewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "whatsnew",
        abstract: "List the features a user upgrading between two versions sees, with their localized texts."
    )

    @OptionGroup var content: ContentOptions
    @Option(help: "The version the user had.") var from: String
    @Option(help: "The version the user has now.") var to: String
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let features = try content.features(from: from, to: to)
        let (low, high) = (try parseVersion(from, "--from"), try parseVersion(to, "--to"))
        let leftOut = low < high ? try content.releasesLeftOut(after: low, through: high, appVersion: to) : []
        if json {
            print(try JSONOutput.encode(features))
            return
        }
        defer { ContentOptions.report(leftOut) }
        if features.isEmpty {
            // Swapped options read as a downgrade, where nothing is ever new.
            let swapped = high < low ? " (--to is older than --from: did you mean --from \(to) --to \(from)?)" : ""
            print("Nothing new from \(from) to \(to)\(swapped).")
        } else {
            print("What's new from \(from) to \(to): \(features.count) feature\(features.count == 1 ? "" : "s")")
            for feature in features {
                print(
                    "- \(feature.title ?? feature.key) (\(feature.version)): \(feature.description ?? "(no description)")"
                        + (feature.image == nil ? " [no image]" : "")
                )
            }
        }
    }
}

struct CheckUpdateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-update",
        abstract: "Say whether a version is up to date, has an update available, or must update."
    )

    @OptionGroup var content: ContentOptions
    // Not --version: that is breeze's own, and help listed both.
    @Option(name: .customLong("app-version"), help: "The running app version.") var version: String
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let current = try parseVersion(version, "--app-version")
        let environment = try content.environment(appVersion: version)
        let notes: ReleaseNotes
        do {
            guard let loaded = try content.contentBundle(environment).releaseNotes() else {
                throw ValidationError("no release notes")
            }
            notes = loaded
        } catch let error as ValidationError { throw error } catch { throw CommandFailure(error) }
        let status = notes.updateStatus(current: current, environment: environment)
        let (word, target, url): (String, String?, URL?) =
            switch status {
            case .upToDate: ("up to date", nil, nil)
            case .available(let latest, let url): ("available", latest.description, url)
            case .required(let minimum, let url): ("required", minimum.description, url)
            }
        if json {
            var object: [String: String] = ["status": word]
            object["version"] = target
            object["url"] = url?.absoluteString
            print(try JSONOutput.encode(object))
        } else {
            print([word, target, url?.absoluteString].compactMap { $0 }.joined(separator: " "))
            ContentOptions.report(notes.releasesLeftOut(after: current, environment: environment))
        }
    }
}

struct PreviewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview",
        abstract: "Render the what's-new screen as a self-contained HTML page."
    )

    @OptionGroup var content: ContentOptions
    @Option(help: "The version the user had.") var from: String
    @Option(help: "The version the user has now.") var to: String
    @Option(name: .shortAndLong, help: "The page to write.") var output: String
    @Flag(help: "Print JSON: {\"output\", \"features\"}.") var json = false

    func run() throws {
        let features = try content.features(from: from, to: to)
        let page = WhatsNewPage.html(
            features: features,
            from: from,
            to: to,
            locale: content.locale ?? Locale.current.identifier
        )
        do { try Data(page.utf8).write(to: URL(fileURLWithPath: output)) } catch { throw CommandFailure(error) }
        struct Written: Encodable {
            var output: String
            var features: Int
        }
        if json { return print(try JSONOutput.encode(Written(output: output, features: features.count))) }
        print("Wrote \(output): \(features.count) feature\(features.count == 1 ? "" : "s").")
    }
}
