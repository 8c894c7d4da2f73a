import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The files of a ``VersionRecord``, decoded from the record's bytes when first read.
///
/// A check the server answers with `304` needs the live record's validators and facts, not its
/// entries, so a record read from disk keeps its `files` member as bytes, checked at once against
/// the exact shape FreshAir writes (`{"path":{"h":"sha256:…","s":123},…}`) so that the later
/// decoding cannot fail; a record in any other shape is decoded at once, as before.
struct RecordFiles: Sendable, Hashable {
    private let box: Box

    init(_ files: [String: FileRecord]) { self.init(FileTable(files)) }

    init(_ table: FileTable) { box = Box(.decoded(table), count: table.count) }

    /// The `files` member at `member` of a large record's `file`, decoded when first read, a
    /// piece at a time each time (``RecordScanner/walkEntries(of:capacity:read:visit:)``), never
    /// held whole. The file is held open: a record rewritten meanwhile (a launch counted) is a
    /// new file, and this one still reads as it was.
    ///
    /// Given `listed`, the count in the record's head, the member is not walked now: an entry
    /// out of shape ends the decoding there, as a file changed in place does, and the files
    /// after it are downloaded again, never trusted. Without a count (a record of an older
    /// FreshAir), it is checked now, and `nil` when it is not in the shape FreshAir writes.
    init?(file: InputFile, member: Range<Int>, listed: Int? = nil) {
        // No entry is shorter than 32 bytes (`"":{"h":"a:` and 40 hex digits): a count past that
        // is not the record's own, and is checked as if absent.
        let listed = listed.flatMap { (0...member.count / 32).contains($0) ? $0 : nil }
        guard let entries = listed ?? Self.walk(file, member, visit: { $0.skipEntry() }) else { return nil }
        box = Box(.onDisk(file, member), count: entries)
    }

    /// The piece a large record is read in.
    static let piece = 256 << 10

    private static func walk(_ file: InputFile, _ member: Range<Int>, visit: (inout RecordScanner) -> Bool) -> Int? {
        RecordScanner.walkEntries(
            of: member,
            capacity: piece,
            read: { offset, buffer in
                (try? file.read(at: Int64(offset), into: UnsafeMutableRawBufferPointer(buffer))) != nil
            },
            visit: visit
        )
    }

    /// Files listed in path order by the plan that made them: no table is made of them unless
    /// ``table`` is read (a sync only writes them, through ``listing``).
    init(_ listing: FileListing) { box = Box(.listed(listing), count: listing.countPaths()) }

    /// The `files` member, `bytes[member]`, or `nil` when it is not in the shape FreshAir writes.
    /// The record's bytes are kept whole, shared with the caller's array: at 100,000 files a
    /// copy of the member was 11 MB more at the no-change check's peak.
    init?(checked bytes: [UInt8], member: Range<Int>) {
        guard let entries = Self.entriesInWrittenShape(bytes, member) else { return nil }
        box = Box(.encoded(bytes, member), count: entries)
    }

    /// The files, sorted by path, decoded on first use.
    var table: FileTable { box.table }
    /// The files in path order, read from the plan's lists when they came from one.
    var listing: FileListing { box.listing }
    /// The files as a dictionary, made anew at each call: a sync looks paths up in ``table``.
    var value: [String: FileRecord] { box.table.dictionary }
    /// How many files, known without decoding them (a summary's "reused" after a `304`).
    var count: Int { box.count }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.box === rhs.box || lhs.table == rhs.table }
    func hash(into hasher: inout Hasher) { hasher.combine(table) }

    private enum State {
        case encoded([UInt8], Range<Int>)
        case onDisk(InputFile, Range<Int>)
        case decoded(FileTable)
        case listed(FileListing)
    }

    /// Shared by copies of one record; decoded once, under its lock.
    private final class Box: Sendable {
        private let state: Mutex<State>
        let count: Int
        init(_ state: State, count: Int) {
            self.state = Mutex(state)
            self.count = count
        }

        var table: FileTable {
            state.withLock { state in
                switch state {
                case .decoded(let table): return table
                case .encoded(let bytes, let member):
                    let table = RecordFiles.table(count: count) { visit in
                        bytes.withUnsafeBufferPointer { RecordScanner.walkEntries(in: $0, of: member, visit: visit) }
                    }
                    state = .decoded(table)
                    return table
                case .onDisk(let file, let member):
                    // A record large enough to be read in pieces keeps its records in an
                    // unnamed file beside it, not in memory (see `DigestsAndSizes`).
                    let folder = URL(fileURLWithPath: file.path).deletingLastPathComponent().path
                    let table = RecordFiles.table(count: count, spillingTo: folder) {
                        RecordFiles.walk(file, member, visit: $0)
                    }
                    state = .decoded(table)
                    return table
                case .listed(let listing):
                    let table = FileTable(sorting: Array(listing))
                    state = .decoded(table)
                    return table
                }
            }
        }

        var listing: FileListing {
            let listed: FileListing? = state.withLock { if case .listed(let listing) = $0 { listing } else { nil } }
            return listed ?? FileListing([FileListing.Run(table)])
        }
    }

    // MARK: The shape FreshAir writes

    /// Where the record's `files` member begins in `bytes` (its `{`) and where the record's own
    /// object ends, when the record is as FreshAir writes it: `files` last, no spaces.
    ///
    /// The first `,"files":{` is that member: a quote inside a JSON string is always escaped,
    /// and the members before it (`id`, `source`, `created`, `previous`, `validators`,
    /// `metadata`) hold strings and numbers only.
    static func split(_ bytes: [UInt8]) -> (filesStart: Int, end: Int)? {
        let marker = Array(#","files":{"#.utf8)
        var end = bytes.count
        while end > 0, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[end - 1]) { end -= 1 }
        guard end >= 2, bytes[end - 1] == UInt8(ascii: "}") else { return nil }
        guard let comma = bytes.withUnsafeBytes({ ByteSearch.firstOffset(of: marker, in: $0) }) else { return nil }
        return (comma + marker.count - 1, end - 1)
    }

    /// How many entries, when `bytes[member]` is `{` entries `}` with every entry
    /// `"path":{"h":"ALGORITHM:HEX","s":DIGITS}`, the path a JSON string of valid UTF-8 and the
    /// hex 40 or 64 digits; `nil` for anything else. Checked without making a string per entry
    /// (only a path with bytes past ASCII is validated as one): a path listed twice (FreshAir
    /// never writes one) is counted twice, and read as its last entry.
    static func entriesInWrittenShape(_ bytes: [UInt8], _ member: Range<Int>) -> Int? {
        bytes.withUnsafeBufferPointer { RecordScanner.walkEntries(in: $0, of: member) { $0.skipEntry() } }
    }

    /// The entries `walk` visits, in a table: FreshAir writes them sorted by path, so they are
    /// sorted already unless another writer made the record. Every entry of bytes checked when
    /// the record was read reads; a large record's file that no longer reads as it did (changed
    /// in place by another writer) gives the entries before the change: files the table lacks
    /// are downloaded again, never trusted.
    ///
    /// Sorted entries go straight into the table, one at a time: a list of 100,000 entries
    /// made first to be sorted was 12.8 MB beside the table it became.
    private static func table(
        count: Int,
        spillingTo folder: String? = nil,
        _ walk: ((inout RecordScanner) -> Bool) -> Int?
    ) -> FileTable {
        var table = FileTable(spillingTo: folder)
        table.reserveCapacity(count)
        var unsorted: [FileTable.Entry]?
        _ = walk { scanner in
            guard let entry = scanner.entry() else { return false }
            if unsorted != nil {
                unsorted!.append(entry)
            } else if !table.appendInOrder(entry) {
                unsorted = Array(table.entries) + [entry]
            }
            return true
        }
        if let unsorted { return FileTable(sorting: unsorted) }
        table.trimRoom()
        return table
    }
}
