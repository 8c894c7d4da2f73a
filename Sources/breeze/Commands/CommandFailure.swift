import ArgumentParser
import Foundation
import FreshAir

/// Prints a failure as one clear line on standard error and exits with a code scripts
/// can act on (see `breeze --help`).
struct CommandFailure: Error, CustomStringConvertible {
    let underlying: any Error

    init(_ underlying: any Error) { self.underlying = underlying }

    var description: String { "\(underlying)" }

    var exitCode: Int32 {
        guard let error = underlying as? FreshAirError else { return 1 }
        return Self.exitCode(for: error)
    }

    static func exitCode(for error: FreshAirError) -> Int32 {
        switch error {
        case .bundledCopyOnly(let underlying): return exitCode(for: underlying)
        case .httpStatus: return 69  // EX_UNAVAILABLE
        case .transport: return 75  // EX_TEMPFAIL
        case .manifest, .hashMismatch, .sizeMismatch, .declaredSizeMismatch, .unrequestedEncoding, .bodyTooLarge,
            .archive, .unsafePath:
            return 65  // EX_DATAERR
        case .storeLocked, .liveLocationOccupied, .fileSystem, .noPreviousVersion: return 73  // EX_CANTCREAT
        }
    }
}

extension CommandFailure {
    /// Reports and exits; ArgumentParser would print its own wording otherwise.
    func exit() -> Never {
        FileHandle.standardError.write(Data("breeze: error: \(description)\n".utf8))
        Foundation.exit(exitCode)
    }
}
