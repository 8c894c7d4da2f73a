package import Foundation
import FreshAir

/// The file names in a content folder that devices would refuse, found before anything is
/// written, by the device's own rules (``BundlePath``): no control characters, backslashes or
/// `..`, and no two names that are one on an Apple device, differing only by case or by Unicode
/// normalization (`Logo.png` and `logo.png`; `café` typed on a Mac and on Linux). Every name
/// is named at once: a manifest's reader stops at the first, one rename per attempt.
package enum DeviceFileNames {
    /// A line per refused name; empty when devices accept every one.
    package static func problems(_ paths: some Sequence<String>) -> [String] {
        var problems: [String] = []
        var names = PathCollisionsKeepingPaths()
        for path in paths {
            do {
                try names.insert(try BundlePath(path))
            } catch {
                problems.append("\(error)")
            }
        }
        return problems
    }

    /// Throws one error naming every file in `folder` that devices would refuse (exit 65).
    package static func check(_ files: [BundleFolder.File], in folder: URL) throws {
        let problems = problems(files.lazy.map(\.path))
        guard !problems.isEmpty else { return }
        let count = problems.count == 1 ? "1 file name" : "\(problems.count) file names"
        throw PublishError(
            "\(count) in \(folder.path) would be refused by devices; rename \(problems.count == 1 ? "it" : "them") (nothing was written):\n"
                + problems.map { "  \($0)" }.joined(separator: "\n"),
            kind: .source
        )
    }
}
