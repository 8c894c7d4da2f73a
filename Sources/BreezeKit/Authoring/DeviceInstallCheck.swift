import Foundation
import FreshAir

/// What `breeze validate` and `breeze release` do with a package or a repository: install it as
/// a device would, into a folder thrown away afterwards, so that what a device would refuse is
/// refused before it is published, in the device's words. A signed document's keys are pinned
/// for the install (those it names), so a signature that does not verify, or that vouches for
/// other bytes, fails as on a device that pins them.
enum DeviceInstallCheck {
    typealias Problem = BundleValidator.Problem

    /// The keys `release` names, to install under, and the problems of its signatures and expiry
    /// (`file` names the document; `renewal` says how it is signed again). An expired release is
    /// said to be so once, and installed without keys: under them it would fail on the date alone.
    static func signers(
        of release: ReleaseFields,
        file: String,
        now: Date,
        renewal: String
    ) -> (problems: [Problem], keys: [TrustedKey]) {
        var problems: [Problem] = []
        var keys: [TrustedKey] = []
        for signature in release.signatures {
            if let key = try? TrustedKey(base64: signature.key) {
                keys.append(key)
            } else {
                problems.append(Problem(severity: .error, file: file, message: ManifestSigner.notAKey(signature.key)))
            }
        }
        if let expires = release.expires {
            problems += BundleValidator.expiryProblems(expires, file: file, now: now, renewal: renewal)
            if expires < now { return (problems, []) }
        }
        return (problems, keys)
    }

    /// Runs `install` with a folder of its own, removed afterwards; what a device would have
    /// said, named `file`, when it fails.
    static func problem(
        file: String,
        _ install: (_ scratch: URL) async throws -> Void
    ) async -> Problem? {
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("breeze-validate-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        do {
            try await install(scratch)
            return nil
        } catch {
            // An archive's own fault in its own words (the library's go on about what a device
            // keeps); any other in the library's. The name they start with (`file`, or a file in
            // it: a repository's `cats-2.tar.gz`) is the problem's.
            var words = (error as? FreshAirError)?.archiveError.map { "devices refuse it: \($0)" } ?? "\(error)"
            var named = file
            if words.hasPrefix(file + ": ") {
                words.removeFirst(file.count + 2)
            } else if words.hasPrefix(file + "/"), let colon = words.range(of: ": ") {
                named = String(words[words.index(words.startIndex, offsetBy: file.count + 1)..<colon.lowerBound])
                words = String(words[colon.upperBound...])
            }
            return Problem(severity: .error, file: named, message: words)
        }
    }

    /// The regular files under `folder` (through the link a store makes) and their bytes.
    static func tally(_ folder: URL) -> (files: Int, bytes: Int64) {
        let keys: [URLResourceKey] = [.isRegularFileKey, .fileSizeKey]
        guard
            let walk = FileManager.default.enumerator(
                at: folder.resolvingSymlinksInPath(),
                includingPropertiesForKeys: keys
            )
        else { return (0, 0) }
        var (files, bytes) = (0, Int64(0))
        for case let file as URL in walk {
            guard let values = try? file.resourceValues(forKeys: Set(keys)), values.isRegularFile == true else {
                continue
            }
            files += 1
            bytes += Int64(values.fileSize ?? 0)
        }
        return (files, bytes)
    }
}
