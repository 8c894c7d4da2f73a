import Crypto
import Foundation

/// Percentage rollouts as ordinary conditions: every install gets a stable number 0–99 for
/// each bundle, `rolloutBucket`, so a manifest entry with the condition `rolloutBucket < 10`
/// reaches 10% of installs, and raising the number widens the rollout without taking it
/// from anyone who has it. Channels need nothing special: the app sets
/// `environment["channel"] = "beta"` and entries say `channel == 'beta'`.
///
/// A sync sets the key from ``BundleStore/installID()`` unless the app set it already.
package enum RolloutBucket {
    /// The condition key.
    package static let key = "rolloutBucket"

    /// The bucket of one install for one bundle: the same on every run, and independent
    /// between bundles, so the same 10% of installs are not first in line for everything.
    package static func of(installID: String, bundle: String) -> Int {
        let digest = SHA256.hash(data: Data("\(installID)\n\(bundle)".utf8))
        let number = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Int(number % 100)
    }
}
