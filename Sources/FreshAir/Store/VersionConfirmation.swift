import Foundation

/// Confirm-or-roll-back: a new version stays only once the app says it works.
extension BundleStore {
    /// Tells the store the live version works: call it once the app has used new content
    /// successfully. A version that is never confirmed is rolled back by
    /// ``rollBackIfUnconfirmed(allowedLaunches:)``.
    public func confirmLive() async throws {
        try await update { update in
            guard var record = update.live, record.metadata[RecordKey.confirmed] == nil else { return }
            record.metadata[RecordKey.confirmed] = "true"
            record.metadata[RecordKey.launches] = nil
            try update.writeRecord(record)
        }
    }

    /// Confirm-or-roll-back, for apps that adopt it: call at launch, before reading content.
    /// Each call counts a launch of an unconfirmed live version; once it has been launched
    /// `allowedLaunches` times without ``confirmLive()`` (the app crashed or found the content
    /// unusable), the previous version goes live again and the failed content is remembered,
    /// so syncs do not install it again until something new is published.
    ///
    /// - Returns: the version now live after a rollback, or `nil` when nothing was rolled back
    ///   (confirmed, still within its launches, or nothing earlier to go back to).
    @discardableResult
    public func rollBackIfUnconfirmed(allowedLaunches: Int = 1) async throws -> VersionRecord? {
        try await update { (update: inout StoreUpdate) -> VersionRecord? in
            guard var record = update.live, record.metadata[RecordKey.confirmed] == nil else { return nil }
            let launches = Int(record.metadata[RecordKey.launches] ?? "") ?? 0
            guard launches >= allowedLaunches, let previousID = record.previous, Disk.isDirectory(versionPath(previousID)) else {
                record.metadata[RecordKey.launches] = String(launches + 1)
                try update.writeRecord(record)
                return nil
            }
            if let root = record.files["manifest.json"]?.hash {
                var rejected = try rejectedContent()
                rejected.insert(RejectedContent(source: record.source, digest: root.hex))
                try Disk.writeAtomically(Data(JSONValue.array(rejected.sorted().map(\.json)).serializedBytes()), to: rejectedPath)
            }
            try update.pointLiveLink(at: previousID)
            try update.collectGarbage()
            var previous = try self.record(previousID)
            // The version gone back to worked before: it needs no confirmation now.
            previous.metadata[RecordKey.confirmed] = "true"
            try update.writeRecord(previous)
            return previous
        }
    }

    /// Root manifests of versions rolled back by ``rollBackIfUnconfirmed(allowedLaunches:)``.
    struct RejectedContent: Hashable, Comparable {
        var source: String
        /// SHA-256 of the root manifest, hex.
        var digest: String

        var json: JSONValue { .object([("source", .string(source)), ("digest", .string(digest))]) }
        static func < (a: Self, b: Self) -> Bool { (a.source, a.digest) < (b.source, b.digest) }
    }

    var rejectedPath: String { root.appendingPathComponent("rejected.json").path }

    func rejectedContent() throws -> Set<RejectedContent> {
        guard let data = FileManager.default.contents(atPath: rejectedPath) else { return [] }
        do {
            let items = try JSONReader.parse(data).array ?? []
            return Set(items.compactMap { item in
                item["source"]?.string.flatMap { source in item["digest"]?.string.map { RejectedContent(source: source, digest: $0) } }
            })
        } catch {
            throw FreshAirError.fileSystem(operation: "read", path: rejectedPath, reason: "\(error)")
        }
    }

    /// Keys of ``VersionRecord/metadata`` for confirm-or-roll-back.
    enum RecordKey {
        static let confirmed = "confirmed"
        static let launches = "launches"
    }
}
