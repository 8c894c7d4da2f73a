import Foundation

/// What the AWS CLI reads besides its environment variables: the shared credentials file
/// (`~/.aws/credentials`, or `AWS_SHARED_CREDENTIALS_FILE`) and the config file
/// (`~/.aws/config`, or `AWS_CONFIG_FILE`), for the profile `AWS_PROFILE` names (`default`
/// otherwise).
///
/// The order is the CLI's: environment variables first, then the credentials file, then the
/// config file. Only static keys are read: a profile that needs SSO, a role to assume or a
/// credential process is refused with words that say so.
package struct AWSProfile: Sendable, Equatable {
    package var name: String
    package var accessKeyID: String?
    package var secretAccessKey: String?
    package var sessionToken: String?
    package var region: String?
    package var endpointURL: String?
    /// The `endpoint_url` of the `s3` block of the `[services NAME]` section the profile's
    /// `services = NAME` names: S3's own, ahead of ``endpointURL``.
    package var s3EndpointURL: String?
    /// The file the keys were read from, as errors name it (`~/.aws/credentials`).
    package var keysFile: String?
    /// A way of getting credentials this reader does not follow (`sso_start_url`, `role_arn`,
    /// `credential_process`), when the profile has no static keys.
    package var unsupportedSource: String?

    /// The profile `name` (or `AWS_PROFILE`, or `default`), read from the files the environment
    /// points at; nothing from a file that is absent.
    package static func load(
        named name: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> AWSProfile {
        let profile = name ?? environment["AWS_PROFILE"] ?? "default"
        let home = environment["HOME"] ?? NSHomeDirectory()
        let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        return resolve(
            profile: profile,
            credentials: read(environment["AWS_SHARED_CREDENTIALS_FILE"] ?? home + "/.aws/credentials"),
            config: read(environment["AWS_CONFIG_FILE"] ?? home + "/.aws/config"),
            credentialsName: environment["AWS_SHARED_CREDENTIALS_FILE"] ?? "~/.aws/credentials",
            configName: environment["AWS_CONFIG_FILE"] ?? "~/.aws/config"
        )
    }

    /// The profile from the two files' texts: the credentials file's `[name]` section, then the
    /// config file's `[profile name]` (or `[default]`) for what the first left out.
    /// `credentialsName` and `configName` are the files as errors name them (``keysFile``).
    package static func resolve(
        profile: String,
        credentials: String,
        config: String,
        credentialsName: String = "~/.aws/credentials",
        configName: String = "~/.aws/config"
    ) -> AWSProfile {
        let fromCredentials = sections(of: credentials)[profile] ?? [:]
        let configSection = profile == "default" ? "default" : "profile \(profile)"
        let configSections = sections(of: config)
        let fromConfig = configSections[configSection] ?? [:]
        let services = fromConfig["services"].flatMap { configSections["services \($0)"] } ?? [:]
        func value(_ key: String) -> String? { fromCredentials[key] ?? fromConfig[key] }
        let sources = ["sso_start_url", "sso_session", "role_arn", "credential_process", "web_identity_token_file"]
        return AWSProfile(
            name: profile,
            accessKeyID: value("aws_access_key_id"),
            secretAccessKey: value("aws_secret_access_key"),
            sessionToken: value("aws_session_token"),
            region: fromConfig["region"] ?? fromCredentials["region"],
            endpointURL: fromConfig["endpoint_url"],
            s3EndpointURL: services["s3.endpoint_url"],
            keysFile: fromCredentials["aws_access_key_id"] != nil
                ? credentialsName : fromConfig["aws_access_key_id"] != nil ? configName : nil,
            unsupportedSource: sources.first { value($0) != nil }
        )
    }

    /// An INI file's sections: `[name]` headers, `key = value` lines, `#` and `;` comments.
    /// Indented lines under a key with no value (`s3 =`) are that key's block, read as
    /// `s3.endpoint_url`; other indented lines continue nothing breeze reads, and are skipped.
    static func sections(of text: String) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var current: String?
        var block: String?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            let indented = rawLine.first == " " || rawLine.first == "\t"
            if !indented, line.hasPrefix("["), line.hasSuffix("]") {
                current = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                block = nil
                continue
            }
            guard let current, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if indented {
                if let block { sections[current, default: [:]]["\(block).\(key)"] = value }
                continue
            }
            block = value.isEmpty ? key : nil
            sections[current, default: [:]][key] = value
        }
        return sections
    }
}
