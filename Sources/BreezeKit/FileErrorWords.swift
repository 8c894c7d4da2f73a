import Foundation
import FreshAir

/// Foundation's and the system's file errors in words, with the path: "site/a.png: no such file
/// or folder", never `Error Domain=NSCocoaErrorDomain Code=260 … UserInfo=…`. The one formatter
/// for file errors in breeze's messages, BreezeKit's own included.
package enum FileErrorWords {
    package enum Problem: Sendable { case missing, denied, full, exists, other }

    /// `error` in words, with its path, when it is a file system error (Cocoa or POSIX); `nil`
    /// otherwise.
    package static func describe(_ error: any Error) -> String? {
        guard let reason = reason(error) else { return nil }
        return "\(PrintableText.escaped(path(of: error) ?? "a file")): \(reason)"
    }

    /// What went wrong with the file, without its path (for a message that names it already).
    package static func reason(_ error: any Error) -> String? {
        let error = error as NSError
        guard error.domain == NSCocoaErrorDomain || error.domain == NSPOSIXErrorDomain else { return nil }
        switch problem(error) {
        case .missing: return "no such file or folder"
        case .denied: return "permission denied; check who owns it, or choose a folder you can write"
        case .full: return "the disk is full"
        case .exists: return "already exists"
        case .other:
            let posix = error.domain == NSPOSIXErrorDomain ? error : error.userInfo[NSUnderlyingErrorKey] as? NSError
            return posix.map { String(cString: strerror(Int32($0.code))) } ?? "the file could not be used"
        }
    }

    /// `error` in words: a file error as ``describe(_:)`` says it, anything else as it says itself.
    package static func words(_ error: any Error) -> String { describe(error) ?? "\(error)" }

    /// The path a file error names, when it names one.
    package static func path(of error: any Error) -> String? {
        let error = error as NSError
        return (error.userInfo[NSFilePathErrorKey] as? String) ?? (error.userInfo[NSURLErrorKey] as? URL)?.path
    }

    /// What kind of file problem `error` is.
    package static func problem(_ error: any Error) -> Problem {
        let error = error as NSError
        if error.domain == NSPOSIXErrorDomain {
            switch Int32(error.code) {
            case ENOENT, ENOTDIR: return .missing
            case EACCES, EPERM, EROFS: return .denied
            case ENOSPC, EDQUOT: return .full
            case EEXIST: return .exists
            default: return .other
            }
        }
        guard error.domain == NSCocoaErrorDomain else { return .other }
        switch error.code {
        case CocoaError.fileNoSuchFile.rawValue, CocoaError.fileReadNoSuchFile.rawValue: return .missing
        case CocoaError.fileReadNoPermission.rawValue, CocoaError.fileWriteNoPermission.rawValue,
            CocoaError.fileWriteVolumeReadOnly.rawValue:
            return .denied
        case CocoaError.fileWriteOutOfSpace.rawValue: return .full
        case CocoaError.fileWriteFileExists.rawValue: return .exists
        default:
            return (error.userInfo[NSUnderlyingErrorKey] as? NSError).map(problem) ?? .other
        }
    }
}
