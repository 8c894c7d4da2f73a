import ArgumentParser
import BreezeKit
import Foundation
import FreshAir

/// Prints a failure as one clear line on standard error and exits with a code scripts
/// can act on (see `breeze --help`).
struct CommandFailure: Error, CustomStringConvertible {
    let underlying: any Error
    /// What to do about it, found by the command itself (one more look at the server); else
    /// the hint ``hint(for:)`` reads from the error alone.
    let foundHint: String?

    /// Wraps `underlying`; a failure already wrapped keeps its own error, and so its exit code.
    init(_ underlying: any Error, hint: String? = nil) {
        self.underlying = (underlying as? CommandFailure)?.underlying ?? underlying
        foundHint = hint ?? (underlying as? CommandFailure)?.foundHint
    }

    /// The library's message, which an app could show as it is, then what a publisher does
    /// about it with breeze: advice naming breeze commands lives here, not in the library.
    var description: String {
        guard let hint else { return message }
        return "\(message)\nbreeze: hint: \(hint)"
    }

    /// What went wrong, without the hint.
    var message: String { ScratchCopy.withSourcePaths(Self.fileSystemWords(underlying) ?? "\(underlying)") }

    /// What to do about it with breeze, when there is advice beyond the message.
    var hint: String? {
        if Self.fileSystemWords(underlying) != nil { return nil }
        return (foundHint ?? (underlying as? FreshAirError).flatMap(Self.hint(for:))).map(ScratchCopy.withSourcePaths)
    }

    /// Foundation's file errors in words, with the path (``FileErrorWords``); a bundle folder
    /// without its manifest says how to make one.
    static func fileSystemWords(_ error: any Error) -> String? {
        if FileErrorWords.problem(error) == .missing, let path = FileErrorWords.path(of: error),
            path.hasSuffix("/manifest.json")
        {
            let folder = String(path.dropLast("/manifest.json".count))
            return
                "\(folder) has no manifest.json: it is not a bundle folder yet; `breeze generate \(folder)` writes one"
        }
        return FileErrorWords.describe(error)
    }

    /// The breeze command that fixes what `error` found on the server, when there is one.
    static func hint(for error: FreshAirError) -> String? {
        if let inner = error.underlying as? FreshAirError { return hint(for: inner) }  // bundledCopyOnly
        if error.code == .transport, error.transportError?.detail.contains("not trusted here") == true {
            return
                "a server whose certificate a private CA signed (a staging server): `--ca-file CA.pem` trusts that CA."
        }
        if error.status == 403, error.url?.isFileURL == false {
            return
                "a bucket published to by `breeze publish` or `release` is readable by devices with `--acl public-read`, or a bucket policy that lets everyone read (a CDN in front needs the same)."
        }
        if [.hashMismatch, .sizeMismatch, .declaredSizeMismatch].contains(error.code) {
            switch error.listing {
            case .manifest:
                return "`breeze hash BUNDLE` recomputes every digest and size; publish the manifests with the files."
            case .packageSignature:
                return
                    "`breeze sign PACKAGE --key KEY` signs the package as it is now (`breeze validate PACKAGE` checks the pair); publish both."
            case .repositoryIndex:
                return
                    "`breeze repo add FOLDER REPOSITORY --key KEY` writes an archive and the index that lists it; publish them together."
            }
        }
        guard let manifestError = error.manifestError else { return nil }
        // What `breeze sign` is given: the document's own kind, read from where it came from.
        let signed =
            manifestError.source.hasSuffix(PackageSignature.suffix)
            ? "PACKAGE" : manifestError.source.hasSuffix("/index.json") ? "REPOSITORY" : "BUNDLE"
        switch manifestError.problem {
        case .entry(_, _, .invalidHash), .entry(_, _, .invalidSize), .entry(_, _, .noDigestInSignedBundle):
            return "`breeze hash BUNDLE` recomputes every digest and size (then `breeze sign` when it is signed)."
        case .invalidJSON, .unexpectedShape, .entry, .pathConflict, .unsafePath, .tooDeep:
            return "`breeze validate BUNDLE` lists every problem of a bundle before it is published."
        case .missingSignedField, .replayedSequence, .unsigned, .signatureInvalid, .expired, .olderSequence:
            return "`breeze sign \(signed) --key KEY` signs a new release: identity, a higher sequence, a new expiry."
        case .wrongIdentity(let expected, _):
            return "`breeze sign \(signed) --key KEY --identity \(expected)` names the identity this device expects."
        case .pinnedPrivateKey:
            return "`breeze keygen NEW.key` makes a new key; pin the public key it prints, never the key file's lines."
        case .belowThreshold, .untrustedSigner:
            return
                "`breeze sign \(signed) --key A --key B` (or `--cosign`) adds signatures of the keys the device pins."
        case .tooLarge, .treeTooLarge, .tooManyEntries:
            return nil
        }
    }

    var exitCode: Int32 {
        if let error = underlying as? PublishError { return Self.exitCode(for: error.kind) }
        if let error = underlying as? SigningError {
            switch error.kind {
            case .content: return 65  // EX_DATAERR
            case .missingFile: return 66  // EX_NOINPUT
            case .cannotWrite: return 73  // EX_CANTCREAT
            }
        }
        if let error = underlying as? PackagingError {
            switch error.kind {
            case .content: return 65  // EX_DATAERR
            case .exists, .cannotWrite: return 73  // EX_CANTCREAT
            case .failed: return 1
            }
        }
        if underlying is ManifestError || underlying is ArchiveError || underlying is JSONSyntaxError { return 65 }
        let error = underlying as NSError
        if error.domain == NSCocoaErrorDomain || error.domain == NSPOSIXErrorDomain {
            return FileErrorWords.problem(error) == .missing ? 66 : 73  // EX_NOINPUT; EX_CANTCREAT
        }
        guard let error = underlying as? FreshAirError else { return 1 }
        return Self.exitCode(for: error)
    }

    static func exitCode(for kind: PublishError.Kind) -> Int32 {
        switch kind {
        case .source: return 65  // EX_DATAERR
        case .server: return 69  // EX_UNAVAILABLE
        case .network, .conflict: return 75  // EX_TEMPFAIL: run again
        case .configuration: return 78  // EX_CONFIG
        case .local: return 73  // EX_CANTCREAT
        }
    }

    static func exitCode(for error: FreshAirError) -> Int32 {
        if let inner = error.underlying as? FreshAirError { return exitCode(for: inner) }  // bundledCopyOnly
        switch error.code {
        case .httpStatus where error.url?.isFileURL == true: return 66  // EX_NOINPUT: no server answered
        case .httpStatus: return 69  // EX_UNAVAILABLE
        // A redirect or TLS set-up the server must change: trying again cannot help.
        case .transport where [.redirect, .tls].contains(error.transportError?.kind): return 69
        case .transport: return 75  // EX_TEMPFAIL
        case .manifest, .hashMismatch, .sizeMismatch, .declaredSizeMismatch, .unrequestedEncoding, .bodyTooLarge,
            .archive, .unsafePath:
            return 65  // EX_DATAERR
        case .storeLocked, .liveLocationOccupied, .fileSystem, .noPreviousVersion: return 73  // EX_CANTCREAT
        default: return 1  // a kind added later
        }
    }
}

extension CommandFailure {
    /// Reports and exits; ArgumentParser would print its own wording otherwise.
    func exit() -> Never {
        TerminalText.writeError("breeze: error: \(description)")
        Foundation.exit(exitCode)
    }
}

extension CommandFailure {
    /// Refuses a folder argument that is not there, before any work: "nope: no such file or
    /// folder" (66), not a report about what the missing folder lacks.
    static func requireFolder(_ path: String) throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            let url = URL(fileURLWithPath: path)
            throw CommandFailure(CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: url.path]))
        }
        // There, but a file: not "no such file", which would send the user looking for it.
        guard isFolder.boolValue else { throw ValidationError("\(path) is a file; this command takes a folder.") }
    }

    /// Refuses a file or folder argument that is not there, before any work (66).
    static func requireExisting(_ path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            let url = URL(fileURLWithPath: path)
            throw CommandFailure(CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: url.path]))
        }
    }

    /// ``requireExisting(_:)`` for a destination that is a folder; `s3://…` is not checked here.
    static func requireExistingDestination(_ destination: String) throws {
        if !destination.hasPrefix("s3://") { try requireExisting(destination) }
    }
}
