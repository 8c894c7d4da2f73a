package import Foundation

/// What the store knows about one installed version: where it came from, the validators
/// of its root document, and every file it verified.
///
/// Kept beside the version's folder as `<id>.json`, so a check never needs to re-hash
/// what is already installed.
package struct VersionRecord: Sendable, Hashable {
    /// The version's number in its store; higher is newer.
    package var id: Int
    /// The URL the content came from.
    package var source: String
    /// When the version was installed.
    package var created: Date
    /// `ETag`/`Last-Modified` of the root document (manifest, package or index).
    package var validators: HTTPValidators?
    /// Every file in the version and what it was verified to be, as a dictionary made at each
    /// call from ``fileTable``: look one path up with ``file(at:)``.
    package var files: [String: FileRecord] {
        get { storedFiles.value }
        set { storedFiles = RecordFiles(newValue) }
    }
    /// Every file in the version, sorted by path (decoded from disk when first read: see
    /// ``RecordFiles``).
    var fileTable: FileTable {
        get { storedFiles.table }
        set { storedFiles = RecordFiles(newValue) }
    }
    private var storedFiles: RecordFiles
    /// Sets the files from lists in path order, without a table of them (a sync's new record).
    mutating func setFiles(_ listing: FileListing) { storedFiles = RecordFiles(listing) }
    /// What the file at `path` was verified to be, or `nil` when the version has none there.
    package func file(at path: String) -> FileRecord? { storedFiles.table[path] }
    /// How many files, without decoding them.
    package var fileCount: Int { storedFiles.count }
    /// The version that was live before this one, kept for ``BundleStore/rollBack()``.
    package var previous: Int?
    /// The signed release this version came from: its `sequence` and `expires` (bundles and
    /// packages with keys pinned).
    package var sequence: Int?
    /// When the signed release stops being acceptable.
    package var expires: Date?
    /// What a bundle's selection was planned for (the environment and keys, as a fingerprint):
    /// while it matches, a `304` needs no re-planning.
    package var plannedFor: String?
    /// Where a package came from.
    package var origin: Origin?
    /// A package's archive format (`tgz`, `zip`…).
    package var packageFormat: String?
    /// A package's SHA-256, as its signed document names it.
    package var packageDigest: String?
    /// A repository bundle's version and repository.
    package var bundleVersion: Int?
    /// The repository a bundle came from.
    package var repository: String?
    /// The app confirmed this version worked (``BundleStore/confirmLive()``).
    package var confirmed: Bool
    /// Launches of this version not yet confirmed (``BundleStore/rollBackIfUnconfirmed(allowedLaunches:inForeground:)``).
    package var unconfirmedLaunches: Int
    /// Facts this version of FreshAir does not know, kept as found (written by a newer one).
    package var otherFacts: [String: String]

    /// Where a package came from.
    package enum Origin: String, Sendable, Hashable {
        /// The copy shipped inside the app.
        case bundled
        /// The server.
        case remote
    }

    /// A record of version `id` from `source`; every other field starts empty.
    package init(
        id: Int,
        source: String,
        created: Date = SyncEnvironment.system.now(),
        validators: HTTPValidators? = nil,
        files: [String: FileRecord] = [:],
        previous: Int? = nil
    ) {
        self.id = id
        self.source = source
        self.created = created
        self.validators = validators
        self.storedFiles = RecordFiles(files)
        self.previous = previous
        confirmed = false
        unconfirmedLaunches = 0
        otherFacts = [:]
    }
}

/// A verified file: its digest and size.
package struct FileRecord: Sendable, Hashable {
    /// The digest the file was verified to have.
    package var hash: ContentHash
    /// Its size in bytes.
    package var size: Int64

    /// A file verified to have `hash` and `size`.
    package init(hash: ContentHash, size: Int64) {
        self.hash = hash
        self.size = size
    }
}

// On disk: one JSON object, the small fields first and `files` last, each file compact
// (`{"h": "sha256:…", "s": 123}`) since a record may list many thousands.
extension VersionRecord {
    init(json data: some Collection<UInt8>) throws(VersionRecordError) {
        let bytes = Array(data)
        // As FreshAir writes it: the small members parsed now, the files when first read.
        var lazyFiles: RecordFiles?
        var head = bytes[...]
        if let (filesStart, end) = RecordFiles.split(bytes),
            let files = RecordFiles(checked: bytes, member: filesStart..<end)
        {
            lazyFiles = files
            head = bytes[..<(filesStart - #","files":"#.utf8.count)] + [UInt8(ascii: "}")]
        }
        try self.init(head: Self.parse(head), lazyFiles: lazyFiles)
    }

    /// A record of ``largeSize`` bytes or more, in the shape FreshAir writes: its small members
    /// read and parsed now, its files decoded a piece at a time when first read, never held
    /// whole (``RecordFiles/init(file:member:listed:)``). `nil` for a smaller record or
    /// another shape: read those whole.
    init?(largeFileAt path: String) throws {
        let file = try InputFile(path: path)
        let size = Int(try file.size)
        guard size >= Self.largeSize else { return nil }
        // The head (id, source, validators, metadata: short strings) is in the first piece.
        let marker = Array(#","files":{"#.utf8)
        var first = [UInt8](repeating: 0, count: min(RecordFiles.piece, size))
        var last = [UInt8](repeating: 0, count: 64)
        try first.withUnsafeMutableBytes { try file.read(at: 0, into: $0) }
        try last.withUnsafeMutableBytes { try file.read(at: Int64(size - 64), into: $0) }
        while let byte = last.last, [0x20, 0x0A, 0x0D, 0x09].contains(byte) { last.removeLast() }
        guard last.last == UInt8(ascii: "}"),
            let comma = first.withUnsafeBytes({ ByteSearch.firstOffset(of: marker, in: $0) })
        else { return nil }
        let head = try Self.parse(first[..<comma] + [UInt8(ascii: "}")])
        // A record that says how many files it lists (FreshAir writes the count) is taken at its
        // word, its files checked as they are decoded: a no-change check of 10,000 files spent
        // 1.5 ms walking them here (9.6 M of its 62 M instructions) to learn their number.
        let listed = head[Self.fileCountKey]?.integer.flatMap { Int(exactly: $0) }
        guard
            let files = RecordFiles(
                file: file,
                member: (comma + marker.count - 1)..<(size - 64 + last.count - 1),
                listed: listed
            )
        else { return nil }
        try self.init(head: head, lazyFiles: files)
    }

    /// The head's count of the files that follow.
    static let fileCountKey = "fileCount"

    /// The size from which a record is read in pieces: 1 MB, about 9,000 files.
    static let largeSize = 1 << 20

    /// A record's members other than `files` (or all of them), as JSON.
    private static func parse(_ head: ArraySlice<UInt8>) throws(VersionRecordError) -> JSONValue {
        do { return try JSONReader.parse(head) } catch { throw VersionRecordError(detail: "\(error)") }
    }

    /// The record whose members other than `files` are `document`, a parsed head, and whose
    /// files are `lazyFiles` (read later), or `document`'s own `files` member when it is `nil`.
    private init(head document: JSONValue, lazyFiles: RecordFiles?) throws(VersionRecordError) {
        guard let id = document["id"]?.integer.flatMap({ Int(exactly: $0) }), let source = document["source"]?.string
        else {
            throw VersionRecordError(detail: "\"id\" or \"source\" is missing")
        }
        var files: [String: FileRecord] = [:]
        let listed = lazyFiles == nil ? document["files"]?.pairs ?? [] : []
        files.reserveCapacity(listed.count)
        for (path, file) in listed {
            guard let text = file["h"]?.string, let colon = text.firstIndex(of: ":"),
                let hash = ContentHash(hex: String(text[text.index(after: colon)...])), let size = file["s"]?.integer
            else { throw VersionRecordError(detail: "the entry for \"\(path)\" has no valid \"h\" and \"s\"") }
            files[path] = FileRecord(hash: hash, size: size)
        }
        let validators = document["validators"].map {
            HTTPValidators(etag: $0["etag"]?.string, lastModified: $0["lastModified"]?.string)
        }
        self.init(
            id: id,
            source: source,
            created: document["created"]?.string.flatMap(ISO8601Timestamp.parse)
                ?? Date(timeIntervalSince1970: 0),
            validators: validators,
            files: files,
            previous: document["previous"]?.integer.flatMap { Int(exactly: $0) }
        )
        if let lazyFiles { storedFiles = lazyFiles }
        var facts: [String: String] = [:]
        for (key, value) in document["metadata"]?.pairs ?? [] { facts[key] = value.string }
        self.facts = facts
    }

    /// The typed fields as the record's `metadata` object stores them: strings, under the keys
    /// every version of FreshAir has written, so that records stay readable both ways.
    var facts: [String: String] {
        get {
            var facts = otherFacts
            facts[FactKey.sequence] = sequence.map(String.init)
            facts[FactKey.expires] = expires.map { String($0.timeIntervalSince1970) }
            facts[FactKey.plannedFor] = plannedFor
            facts[FactKey.origin] = origin?.rawValue
            facts[FactKey.packageFormat] = packageFormat
            facts[FactKey.packageDigest] = packageDigest
            facts[FactKey.bundleVersion] = bundleVersion.map(String.init)
            facts[FactKey.repository] = repository
            facts[FactKey.confirmed] = confirmed ? "true" : nil
            facts[FactKey.launches] = unconfirmedLaunches > 0 ? String(unconfirmedLaunches) : nil
            return facts
        }
        set {
            var facts = newValue
            sequence = facts.removeValue(forKey: FactKey.sequence).flatMap { Int($0) }
            expires = facts.removeValue(forKey: FactKey.expires).flatMap(Double.init).map(
                Date.init(timeIntervalSince1970:)
            )
            plannedFor = facts.removeValue(forKey: FactKey.plannedFor)
            origin = facts.removeValue(forKey: FactKey.origin).flatMap(Origin.init(rawValue:))
            packageFormat = facts.removeValue(forKey: FactKey.packageFormat)
            packageDigest = facts.removeValue(forKey: FactKey.packageDigest)
            bundleVersion = facts.removeValue(forKey: FactKey.bundleVersion).flatMap { Int($0) }
            repository = facts.removeValue(forKey: FactKey.repository)
            confirmed = facts.removeValue(forKey: FactKey.confirmed) == "true"
            unconfirmedLaunches = facts.removeValue(forKey: FactKey.launches).flatMap { Int($0) } ?? 0
            otherFacts = facts
        }
    }

    /// The keys of the `metadata` object on disk.
    enum FactKey {
        static let sequence = "sequence"
        static let expires = "expires"
        static let plannedFor = "environment"
        static let origin = "origin"
        static let packageFormat = "format"
        static let packageDigest = "sha256"
        static let bundleVersion = "bundleVersion"
        static let repository = "repository"
        static let confirmed = "confirmed"
        static let launches = "launches"
    }

    /// Hands the record's JSON to `write` in pieces of about 256 KB: a record of 100,000 files
    /// is 11 MB, which would otherwise be in memory at once, at the peak of a sync.
    func writeJSON(_ write: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        var head: [(key: String, value: JSONValue)] = [
            ("id", JSONValue(id)), ("source", .string(source)), ("created", .string(ISO8601Timestamp.format(created))),
        ]
        if let previous { head.append(("previous", JSONValue(previous))) }
        if let validators {
            var pairs: [(key: String, value: JSONValue)] = []
            if let etag = validators.etag { pairs.append(("etag", .string(etag))) }
            if let lastModified = validators.lastModified { pairs.append(("lastModified", .string(lastModified))) }
            head.append(("validators", .object(pairs)))
        }
        head.append(("metadata", .object(facts.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })))
        // How many files follow: a large record read back need not walk them to know (``init(largeFileAt:)``).
        head.append((Self.fileCountKey, JSONValue(storedFiles.count)))
        // The files are written straight into the buffer, as they are read: a tree of JSON values
        // for 100,000 files would hold each path, digest and size a second time, and more.
        let piece = 256 << 10
        var writer = JSONWriter(indent: 0, capacity: piece + 4096)
        writer.write(.object(head), level: 0)
        writer.output.removeLast()  // the head's closing brace: the files follow
        writer.output.append(contentsOf: #","files":{"#.utf8)
        // In path order: the record lists files in the same order each time.
        for (index, entry) in storedFiles.listing.enumerated() {
            let file = entry.record
            if index > 0 { writer.output.append(UInt8(ascii: ",")) }
            writer.quote(entry.path)
            writer.output.append(contentsOf: #":{"h":""#.utf8)
            // A digest's algorithm and hex are ASCII letters and digits: nothing to escape.
            writer.output.append(contentsOf: file.hash.algorithm.rawValue.utf8)
            writer.output.append(UInt8(ascii: ":"))
            file.hash.appendHex(to: &writer.output)
            writer.output.append(contentsOf: #"","s":"#.utf8)
            writer.decimal(file.size)
            writer.output.append(UInt8(ascii: "}"))
            if writer.output.count >= piece {
                try writer.output.withUnsafeBytes(write)
                writer.output.removeAll(keepingCapacity: true)
            }
        }
        writer.output.append(contentsOf: "}}".utf8)
        try writer.output.withUnsafeBytes(write)
    }
}

/// A version record that could not be read.
struct VersionRecordError: Error, CustomStringConvertible {
    var detail: String
    var description: String { detail }
}
