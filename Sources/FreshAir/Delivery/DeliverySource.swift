import Foundation

/// A delivery mode as the pipeline sees it: where its root document is, whose lock a run
/// takes, and its own steps once the lock is taken. ``DeliveryRun`` does the rest.
///
/// ``BundleSync``'s root is a manifest and its store the bundle's; ``PackageUpdater``'s root is
/// the package (or its signed `.sig`) and its store the package's; ``Repository``'s root is its
/// `index.json` and its store the one that keeps that index, each bundle then installing into
/// a store of its own.
protocol DeliverySource: Sendable {
    /// The root document's URL, named when the deadline passes.
    var rootURL: URL { get }
    /// The store whose lock a run holds.
    var runStore: BundleStore { get }
    var transport: any HTTPTransport { get }
    var configuration: SyncConfiguration { get }
    /// For a `file://` source, the folder a link may not lead out of.
    var localRoot: URL? { get }

    /// The mode's own steps, with the store's lock taken: check the root, decide, install.
    /// The summary's cost (requests, bytes wasted, seconds) is filled in afterwards.
    func deliver(_ update: inout StoreUpdate, run: DeliveryRun) async throws -> SyncSummary
}
