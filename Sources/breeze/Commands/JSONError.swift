import ArgumentParser
import BreezeKit
import Foundation
import FreshAir

/// A failure as a script reads it when it asked for `--json`: one object on standard output,
/// `{"error": {"code", "exitStatus", "message", "hint"}}` (`hint` only when there is one; see
/// docs/json/error.schema.json), beside the usual lines on standard error.
struct JSONError: Encodable {
    struct Body: Encodable {
        /// Stable words a script can switch on: the exit status's meaning (`not-found`,
        /// `invalid-content`…), or the library's own code where it has one (`hashMismatch`).
        var code: String
        var exitStatus: Int32
        /// What went wrong.
        var message: String
        /// What to do about it, when breeze has advice beyond the message.
        var hint: String?
        /// The validation problems that stopped a release, each as `breeze validate --json`
        /// lists it; absent for other failures.
        var problems: [BundleValidator.Problem]?
    }

    var error: Body

    /// Whether the command line asked for JSON.
    static var requested: Bool { CommandLine.arguments.dropFirst().contains("--json") }

    init(
        message: String,
        exitStatus: Int32,
        hint: String? = nil,
        libraryCode: String? = nil,
        problems: [BundleValidator.Problem] = []
    ) {
        error = Body(
            code: libraryCode ?? Self.code(for: exitStatus),
            exitStatus: exitStatus,
            message: message,
            hint: hint,
            problems: problems.isEmpty ? nil : problems
        )
    }

    /// The meaning of each exit status of `breeze --help`, as a script matches it.
    static func code(for status: Int32) -> String {
        switch status {
        case 64: "usage"
        case 65: "invalid-content"
        case 66: "not-found"
        case 69: "server"
        case 73: "cannot-write"
        case 75: "network"
        case 78: "configuration"
        default: "failed"
        }
    }

    func print() {
        guard let text = try? JSONOutput.encode(self) else { return }
        Swift.print(text)
    }
}

extension CommandFailure {
    /// This failure for a script: the library's code when it comes from FreshAir.
    var json: JSONError {
        let library = (underlying as? FreshAirError).map { "\($0.code)" }
        return JSONError(
            message: message,
            exitStatus: exitCode,
            hint: hint,
            libraryCode: library,
            problems: (underlying as? PublishError)?.problems ?? []
        )
    }
}
