import Foundation

/// A minimum transfer rate, measured over a window.
package struct ThroughputFloor: Sendable, Hashable {
    /// The lowest rate tolerated, averaged over ``window``.
    package var bytesPerSecond: Int64
    /// How long a body may run below ``bytesPerSecond`` before it is abandoned.
    package var window: Duration

    /// A floor of `bytesPerSecond`, judged over each `window`.
    package init(bytesPerSecond: Int64, window: Duration) {
        self.bytesPerSecond = bytesPerSecond
        self.window = window
    }
}
