import Foundation

/// One publish's hold on the live root: what it read first, and what it lets replace it.
struct RootTransaction: Sendable {
    /// The root as this publish found it; `nil` for an unsigned package (its one file is its root).
    let live: LiveRoot?
    let removals: RemovalCheck
    let dryRun: Bool

    /// Checks `next`, the root this publish would write, against the live one, and notes in
    /// `report` whether it is the first release there and what it removes. A dry run reports
    /// the removals that would need `--allow-removals` as a warning instead of refusing.
    ///
    /// - Throws: ``PublishError`` from ``LiveRoot/admit(_:removals:at:)``.
    func admit(_ next: Data, at destination: any PublishDestination, into report: inout Publisher.Report) throws {
        guard let live else { return }
        report.first = live.object == nil
        report.removedFromLive = try live.admit(
            next,
            removals: dryRun ? RemovalCheck(allowsAny: true) : removals,
            at: destination
        )
        if dryRun, let problem = removals.problem(report.removedFromLive) {
            report.warnings.append("would be refused: \(problem)")
        }
    }
}
