import Foundation

/// The newest `sequence` a store has accepted for one signed identity (from any source: a
/// mirror, another host name, scheme or port), and the SHA-256 of the document that carried it.
///
/// It only rises. Rolling content back (``BundleStore/rollBack()``,
/// ``BundleStore/rollBackIfUnconfirmed(allowedLaunches:inForeground:)``, `breeze rollback`) restores files
/// but leaves the mark where it is, so an older document replayed by a server or a stale CDN
/// copy is refused after a rollback too; and with keys pinned, a document with the same
/// sequence is accepted only when it is byte for byte the one accepted before.
struct HighWaterMark: Hashable, Sendable {
    var sequence: Int
    /// SHA-256 of the accepted document, hex.
    var digest: String
}

/// The marks of every source a store (or a repository's state folder) has accepted from,
/// in one JSON file beside its content.
struct HighWaterMarks {
    let path: String

    /// The mark for `source`, or `nil` when nothing sequenced was accepted from it yet.
    ///
    /// - Throws: when the file exists but cannot be read: protection against replay must not
    ///   vanish because a file was damaged (delete it by hand to start over).
    func mark(for source: String) throws -> HighWaterMark? {
        try all()[source]
    }

    /// The highest of the marks whose key `matches`, or `nil` when none does.
    func highest(where matches: (String) -> Bool) throws -> HighWaterMark? {
        try all().filter { matches($0.key) }.values.max { $0.sequence < $1.sequence }
    }

    /// Raises the mark for `source` to `mark`; a lower or equal sequence leaves it as it is.
    func raise(_ mark: HighWaterMark, for source: String) throws {
        var all = try all()
        if let current = all[source], current.sequence >= mark.sequence { return }
        all[source] = mark
        let items = all.keys.sorted().map { source in
            JSONValue.object([
                ("source", .string(source)), ("sequence", JSONValue(all[source]!.sequence)),
                ("digest", .string(all[source]!.digest)),
            ])
        }
        try Disk.writeAtomically(Data(JSONValue.array(items).serializedBytes()), to: path)
    }

    private func all() throws -> [String: HighWaterMark] {
        guard let data = FileManager.default.contents(atPath: path) else { return [:] }
        guard let items = (try? JSONReader.parse(data))?.array else {
            throw FreshAirError.fileSystem(
                operation: "read",
                path: path,
                reason:
                    "not the list of accepted sequences FreshAir writes; restore it, or delete it to accept any sequence again"
            )
        }
        var marks: [String: HighWaterMark] = [:]
        for item in items {
            guard let source = item["source"]?.string, let sequence = item["sequence"]?.integer,
                let digest = item["digest"]?.string
            else { continue }
            marks[source] = HighWaterMark(sequence: Int(sequence), digest: digest)
        }
        return marks
    }
}

extension BundleStore {
    /// Where the newest key document accepted through ``KeyRotation`` is kept.
    var keyDocumentPath: String { stateFolder.appendingPathComponent("keys.json").path }

    /// The high-water marks of everything this store installed.
    var highWaterMarks: HighWaterMarks {
        HighWaterMarks(path: stateFolder.appendingPathComponent("high-water.json").path)
    }
}
