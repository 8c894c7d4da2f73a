import Foundation
import FreshAir

/// `breeze publish --gc --keep N`: removes objects that none of the last `keep` versions of
/// any bundle sharing the store needs.
///
/// What is needed is read from the store itself: every history document
/// (``PublishHistory``), the root manifests it names (stored as objects) and the child
/// manifests they lead to. An object younger than `grace` is kept whatever it is for: another
/// publish may have uploaded it a moment ago without having named it in its history yet. When
/// a kept version cannot be read whole, nothing is removed.
package struct ObjectCollector: Sendable {
    /// Versions of each bundle whose objects stay, the newest included.
    package var keep: Int
    /// Objects modified more recently than this are never removed.
    package var grace: Duration

    package init(keep: Int, grace: Duration = .seconds(3600)) {
        self.keep = max(1, keep)
        self.grace = grace
    }

    /// Removes (or, with `dryRun`, lists) the objects of `store` no kept version needs.
    /// `current` is the root just published, kept even if its history could not be written.
    func run(in store: any PublishDestination, also current: String, dryRun: Bool) async throws -> [String] {
        let listing = try await store.list()
        var needed: Set<String> = [current]
        var roots: [String] = [current]
        for path in listing.keys.sorted()
        where path.hasPrefix(PublishHistory.folder) && path.hasSuffix(".json") {
            guard let data = try await store.read(path) else { continue }
            roots += try PublishHistory.roots(in: data, source: path).prefix(keep)
        }
        var pending = roots
        while let hex = pending.popLast() {
            needed.insert(hex)
            guard let data = try await store.read(hex) else {
                if dryRun && hex == current { continue }  // not uploaded in a dry run
                throw PublishError(
                    "garbage collection stopped, nothing removed: the manifest object \(hex), which a kept version names, "
                        + "is missing from \(store.description)"
                )
            }
            let manifest = try Manifest(data: data, source: "\(store.description)/\(hex)")
            for entry in manifest.entries {
                guard let hash = entry.hash, hash.algorithm == .sha256 else { continue }
                if entry.isChildManifest && !needed.contains(hash.hex) { pending.append(hash.hex) }
                needed.insert(hash.hex)
            }
        }
        let now = Date()
        let cutoff = now.addingTimeInterval(-Double(grace.components.seconds))
        let unneeded = listing.filter { path, object in
            Self.isObjectName(path) && !needed.contains(path) && (object.modified.map { $0 <= cutoff } ?? false)
        }.keys.sorted()
        if !dryRun {
            _ = try await Publisher.inParallel(unneeded.indices, width: 8) { index in
                try await store.delete(unneeded[index])
            }
        }
        return unneeded
    }

    /// 64 lowercase hex digits, at the store's top level.
    static func isObjectName(_ path: String) -> Bool {
        ContentHash.isLowercaseHex(path, digits: 64)
    }
}
