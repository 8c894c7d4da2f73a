/// A publishing problem, saying what to do, and of a kind a script can act on (breeze exits
/// with a code per kind: see ``Kind``).
package struct PublishError: Error, CustomStringConvertible {
    /// Whose move it is.
    package enum Kind: Sendable {
        /// The source is not fit to publish (stale digests, a signing key in the folder): fix it first.
        case source
        /// How breeze was told to publish (credentials, endpoint, options) is wrong.
        case configuration
        /// The destination answered with an error status, after any retries.
        case server
        /// The destination could not be reached, or the connection failed, after any retries: try again.
        case network
        /// Writing to a folder destination failed.
        case local
        /// Another release reached the destination while this one was under way: its root was
        /// not written. A release signs above the winner when run again.
        case conflict
    }

    /// A breeze command that moves on from here, which the command line spells out with the
    /// options the author gave (advice naming commands lives there, not in the library).
    package enum Remedy: Sendable {
        /// `breeze revert DESTINATION`: publish an earlier release again above the live one.
        case revert
    }

    package let kind: Kind
    package let description: String
    package let remedy: Remedy?
    /// The validation problems that stopped the release, one by one (`--json` lists them as
    /// `breeze validate --json` does); empty for any other failure.
    package let problems: [BundleValidator.Problem]

    package init(
        _ description: String,
        kind: Kind = .source,
        remedy: Remedy? = nil,
        problems: [BundleValidator.Problem] = []
    ) {
        self.kind = kind
        self.description = description
        self.remedy = remedy
        self.problems = problems
    }

    /// The refusal of a release whose validation found `errors`: nothing was published.
    package static func wouldReachDevices(_ errors: [BundleValidator.Problem]) -> PublishError {
        PublishError(
            "\(errors.count) problem\(errors.count == 1 ? "" : "s") would reach devices; nothing was published:\n"
                + errors.map { "  \($0)" }.joined(separator: "\n"),
            problems: errors
        )
    }
}
