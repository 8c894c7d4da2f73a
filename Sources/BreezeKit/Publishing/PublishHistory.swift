import Crypto
import Foundation
import FreshAir

/// Which root manifests a destination has published, newest first, kept in the object store
/// it uses (`history/<id>.json`, `id` derived from the destination's address), so a store
/// that several bundles share knows every bundle's versions, `breeze history` can list them
/// and `breeze revert` can step back through them.
///
/// The document is not signed: whoever can write to the bucket can change it. It only says
/// where to look; every root it names is an object whose signature is checked before breeze
/// signs its entries again.
enum PublishHistory {
    static let folder = "history/"
    /// Entries kept: the oldest beyond these are dropped (and their objects become garbage).
    static let limit = 1000

    /// One published root.
    struct Entry: Sendable, Equatable {
        /// The root manifest's SHA-256, its object name in the store.
        var sha256: String
        /// When it was made the destination's root (absent in histories from before 0.9).
        var published: Date?
        /// The root whose content a revert published again, by digest: the next revert goes
        /// back from there, not to the release just reverted.
        var restores: String?
    }

    /// The history document's path in the store for `destination`.
    static func path(for destination: any PublishDestination) -> String {
        let digest = SHA256.hash(data: Data(destination.description.utf8))
        return folder + S3RequestSigner.hex(digest).prefix(16) + ".json"
    }

    /// The root digests in the history document `data`, newest first.
    static func roots(in data: Data, source: String) throws -> [String] {
        try entries(in: data, source: source).map(\.sha256)
    }

    /// The entries of the history document `data`, newest first. An entry whose digest is
    /// not 64 hex digits is skipped: it could name no object.
    static func entries(in data: Data, source: String) throws -> [Entry] {
        let json: JSONValue
        do { json = try JSONReader.parse(data) } catch {
            throw PublishError("\(source) is not a history document written by breeze: \(error)")
        }
        guard let roots = json["roots"]?.array else {
            throw PublishError("\(source) is not a history document written by breeze (no \"roots\")")
        }
        return roots.compactMap { item in
            guard let hex = item["sha256"]?.string, ContentHash.isLowercaseHex(hex, digits: 64) else { return nil }
            let restores = item["restores"]?.string.flatMap { ContentHash.isLowercaseHex($0, digits: 64) ? $0 : nil }
            let published = item["published"]?.string.flatMap { ISO8601Timestamp.parseUTCSeconds($0) }
            return Entry(sha256: hex, published: published, restores: restores)
        }
    }

    /// The history of `destination` in `store`, newest first; empty when there is none.
    static func read(
        for destination: any PublishDestination,
        in store: any PublishDestination
    ) async throws
        -> [Entry]
    {
        let path = path(for: destination)
        guard let data = try await store.read(path) else { return [] }
        return try entries(in: data, source: "\(store)/\(path)")
    }

    /// Puts `entry` first in `destination`'s history. Two releases adding at once both stay
    /// named: each write replaces only the history it read, and reads it again when another
    /// got there first (``ObjectCollector`` keeps what the history names).
    static func add(
        _ entry: Entry,
        for destination: any PublishDestination,
        in store: any PublishDestination
    ) async throws {
        try await edit(for: destination, in: store) { entries in
            entries.removeAll { $0.sha256 == entry.sha256 }
            entries.insert(entry, at: 0)
        }
    }

    /// Takes `entry` out again: the release that added it lost the race for the root, and
    /// its root was never live.
    static func remove(
        _ entry: Entry,
        for destination: any PublishDestination,
        in store: any PublishDestination
    ) async throws {
        try await edit(for: destination, in: store) { entries in entries.removeAll { $0 == entry } }
    }

    /// Reads the history, changes it with `change`, and writes it back only over the one it
    /// read: on a conflict, again from the start (20 tries).
    private static func edit(
        for destination: any PublishDestination,
        in store: any PublishDestination,
        _ change: (inout [Entry]) -> Void
    ) async throws {
        let path = path(for: destination)
        for attempt in 1...20 {
            let existing = try await store.readTagged(path)
            var entries = try existing.map { try self.entries(in: $0.data, source: path) } ?? []
            let before = entries
            change(&entries)
            guard entries != before || existing == nil else { return }
            do {
                let document = Data(serialized(entries.prefix(limit), for: destination))
                _ = try await LiveRoot(path: path, object: existing).replace(with: document, at: store)
                return
            } catch let error as PublishError where error.kind == .conflict && attempt < 20 {
                continue
            }
        }
    }

    /// The history document naming `entries`.
    static func serialized(_ entries: ArraySlice<Entry>, for destination: any PublishDestination) -> [UInt8] {
        let roots = entries.map { entry in
            var members: [(key: String, value: JSONValue)] = [("sha256", .string(entry.sha256))]
            if let published = entry.published {
                members.append(("published", .string(ISO8601Timestamp.format(published))))
            }
            if let restores = entry.restores { members.append(("restores", .string(restores))) }
            return JSONValue.object(members)
        }
        let document: JSONValue = .object([
            ("destination", .string(destination.description)),
            ("updated", .string(ISO8601Timestamp.format(Date()))),
            ("roots", .array(roots)),
        ])
        var bytes = document.serializedBytes(indent: 2)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }
}
