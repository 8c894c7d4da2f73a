import Foundation
import FreshAir

/// The words a status line shows for each phase of a `ContentModel` or a `RepositoryModel`:
/// plain Swift, so it is built here too, while the views beside it need SwiftUI.
enum ContentStatus {
    static func text(for phase: ContentModel.Phase) -> String {
        switch phase {
        case .idle:
            return ""
        case .checking:
            return "Checking for new content…"
        case .downloading(let done, let total?) where total > 0:
            return "Downloading \(done * 100 / total)%"
        case .downloading(let done, _):
            return "Downloading \(ByteCountFormatter.string(fromByteCount: done, countStyle: .file))"
        case .current(let version?):
            return "Up to date (version \(version))"
        case .current(nil):
            return "No content yet"
        case .failed(_, let live?):
            return "Could not update; showing version \(live)"
        case .failed(let error, nil):
            return "No content yet: \(error.localizedDescription)"
        }
    }

    /// The same for a `RepositoryModel`: a repository has no version of its own (its phases
    /// carry `nil`), so a current one counts the bundles installed instead.
    static func text(for phase: ContentModel.Phase, installed: Int) -> String {
        switch phase {
        case .current:
            return installed == 0 ? "Nothing installed yet" : "Up to date (\(installed) installed)"
        case .failed where installed > 0:
            return "Could not update; \(installed) still installed"
        default:
            return text(for: phase)
        }
    }
}
