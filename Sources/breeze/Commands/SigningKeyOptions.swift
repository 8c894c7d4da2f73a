import ArgumentParser
import BreezeKit
import Foundation

/// Where `release` and `revert` take signing keys from: files, standard input, or an
/// environment variable (as CI secrets are), so a key never has to be a file on disk.
struct SigningKeyOptions: ParsableArguments {
    @Option(
        name: .customLong("key"),
        help: "A private key file from `breeze keygen`, or - for standard input.",
        completion: .file()
    )
    var keyFiles: [String] = []
    @Option(help: "The name of an environment variable holding a private key file's text.") var keyEnv: String?
    @Option(help: "Days until devices refuse a newly signed release.") var expires = 30

    func validate() throws {
        try CheckedNumber.require(expires, in: CheckedNumber.expiryDays, "--expires", "days")
        if keyFiles.filter({ $0 == "-" }).count > 1 { throw ValidationError("--key - can be given once.") }
    }

    /// `--switch-keys`, of `release` and `publish`: what it allows, and when it is safe.
    static let switchKeysHelp = ArgumentHelp(
        "Publish a release signed only by other keys than the published one.",
        discussion: "Only once the apps trust the new key (an app update, or a key document they follow): "
            + "devices that pin only the old key refuse the release and keep what they have."
    )

    /// How long a newly signed release is accepted.
    var validity: Duration { .seconds(expires * 86_400) }

    /// The signing keys, from files, standard input and the environment.
    func signingKeys() throws -> [SigningKey] {
        var keys = try keyFiles.map { path in
            try SigningKey(contentsOf: URL(fileURLWithPath: path == "-" ? "/dev/stdin" : path))
        }
        if let keyEnv {
            guard let text = ProcessInfo.processInfo.environment[keyEnv], !text.isEmpty else {
                throw ValidationError("--key-env \(keyEnv): no such environment variable, or it is empty.")
            }
            keys.append(try SigningKey(text: text, origin: "the environment variable \(keyEnv)"))
        }
        return keys
    }
}

/// How `publish`, `release` and `revert` reach an S3 destination.
struct S3DestinationOptions: ParsableArguments {
    @Option(help: "An S3-compatible server's URL (MinIO, Ceph, R2).") var endpoint: String?
    @Option(help: "The bucket's region.") var region: String?
    @Option(
        help: "The AWS profile whose credentials, region and endpoint_url to use (default: AWS_PROFILE, else default)."
    )
    var profile: String?
    @Option(help: "S3: a canned ACL for every object, such as public-read for a bucket devices read over HTTP.")
    var acl: String?
    @Option(
        help:
            "S3: seconds without an answer before a request is tried again (4 tries in all: a server that never answers is given up on within a minute)."
    )
    var timeout = 14

    func validate() throws {
        try CheckedNumber.require(timeout, in: CheckedNumber.timeoutSeconds, "--timeout", "seconds")
    }

    /// What these flags set alike for every command: the ACL, how long to wait for an answer,
    /// and each retry reported on standard error.
    var options: S3Options {
        var options = S3Options()
        options.acl = acl
        options.idleTimeout = .seconds(timeout)
        options.onRetry = { note in TerminalText.writeError("breeze: \(note)") }
        return options
    }

    /// Runs `body` with `destination` (a folder or s3://BUCKET/PREFIX) opened, with `options`
    /// (by default ``options``; a command adds its own to those).
    func with<Result: Sendable>(
        _ destination: String,
        options: S3Options? = nil,
        _ body: (any PublishDestination) async throws -> Result
    ) async throws -> Result {
        try await PublishDestinations.with(
            destination,
            endpoint: endpoint,
            region: region,
            profile: profile,
            options: options ?? self.options,
            body
        )
    }
}
