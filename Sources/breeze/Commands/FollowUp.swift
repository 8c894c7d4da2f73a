import BreezeKit
import Foundation

/// A breeze command a message tells the author to run next, spelled with the options this run
/// was given (the key, the endpoint, the profile), so it works when pasted as it is.
struct FollowUp {
    var words: [String]

    /// `breeze revert DESTINATION` with the options it needs.
    static func revert(_ destination: String, keys: SigningKeyOptions?, s3: S3DestinationOptions) -> FollowUp {
        FollowUp(words: ["breeze", "revert", destination] + (keys?.echoed ?? ["--key", "KEY_FILE"]) + s3.echoed)
    }

    /// `breeze release --renew DESTINATION` with the options it needs.
    static func renew(_ destination: String, keys: SigningKeyOptions, s3: S3DestinationOptions) -> FollowUp {
        FollowUp(words: ["breeze", "release", "--renew", destination] + keys.echoed + s3.echoed)
    }

    /// The command as a shell reads it, each word quoted when it needs to be.
    var text: String { words.map(Self.quoted).joined(separator: " ") }

    /// `word` as one shell word: as it is when it holds only safe characters, else in single quotes.
    static func quoted(_ word: String) -> String {
        let safe = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_./:=@%+,"))
        if !word.isEmpty, word.unicodeScalars.allSatisfy(safe.contains) { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// The hint for a publishing error that names a remedy, else `nil`.
    static func hint(
        for error: PublishError,
        destination: String,
        keys: SigningKeyOptions?,
        s3: S3DestinationOptions
    ) -> String? {
        switch error.remedy {
        case .revert?:
            "in the object layout, `\(revert(destination, keys: keys, s3: s3).text)` goes back to an earlier "
                + "release without its folder"
        case nil: nil
        }
    }
}

extension SigningKeyOptions {
    /// These options as given, to repeat in a follow-up command (`KEY_FILE` when none was).
    var echoed: [String] {
        var words = keyFiles.flatMap { ["--key", $0] }
        if let keyEnv { words += ["--key-env", keyEnv] }
        return words.isEmpty ? ["--key", "KEY_FILE"] : words
    }
}

extension S3DestinationOptions {
    /// The options that say how to reach the destination, as given.
    var echoed: [String] {
        [("--endpoint", endpoint), ("--region", region), ("--profile", profile)].flatMap { name, value in
            value.map { [name, $0] } ?? []
        }
    }
}
