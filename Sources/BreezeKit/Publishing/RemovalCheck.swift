import FreshAir

/// The guard on a release that takes content away from devices: a release made from an empty
/// or wrong folder would otherwise reach every device at once as an empty bundle.
///
/// A release that removes every file the live root lists, more than half of them, or more than
/// ``largestBytes`` needs `--allow-removals`. Files are counted as the root lists them
/// (``RootDocument/listing``): a bundle's root manifest entries (a child manifest is one
/// entry), a repository's bundles.
package struct RemovalCheck: Sendable {
    /// More bytes than this removed in one release need `--allow-removals`.
    package static let largestBytes: Int64 = 256 << 20

    /// `--allow-removals`: any removal goes.
    package var allowsAny: Bool

    package init(allowsAny: Bool = false) { self.allowsAny = allowsAny }

    /// What a root no longer lists of the live one's.
    package struct Removed: Sendable, Codable, Equatable {
        /// The paths (bundle names in a repository), sorted.
        package var paths: [String] = []
        /// Their sizes added up, as the live root records them.
        package var bytes: Int64 = 0
        /// How many the live root lists.
        package var liveCount = 0

        package init() {}

        package init(live: [String: Int64], next: [String: Int64]) {
            paths = live.keys.filter { next[$0] == nil }.sorted()
            // Sizes come from what the store holds: added without overflow (at most Int64.max).
            bytes = paths.reduce(0) { total, path in
                let (sum, overflow) = total.addingReportingOverflow(max(0, live[path] ?? 0))
                return overflow ? .max : sum
            }
            liveCount = live.count
        }
    }

    /// Why `removed` needs `--allow-removals`, in words; `nil` when it does not.
    package func problem(_ removed: Removed) -> String? {
        guard !allowsAny, !removed.paths.isEmpty else { return nil }
        let count = removed.paths.count
        let what: String
        if count == removed.liveCount {
            what = "every file devices have (\(count))"
        } else if count * 2 > removed.liveCount {
            what = "\(count) of the \(removed.liveCount) files devices have"
        } else if removed.bytes > Self.largestBytes {
            what = "\(ByteCount(removed.bytes)) of content (more than \(ByteCount(Self.largestBytes)))"
        } else {
            return nil
        }
        let first = removed.paths.prefix(3).joined(separator: ", ") + (count > 3 ? ", …" : "")
        return "this release removes \(what): \(first). Is the source the right folder? "
            + "`--dry-run` lists what would be removed; if this is meant, run again with --allow-removals"
    }
}
