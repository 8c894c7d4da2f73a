import Foundation

/// Caps and policies that stop hostile or runaway archives (gzip bombs, millions of
/// entries, links).
package struct ExtractionLimits: Sendable, Hashable {
    /// What a package may do with symbolic links.
    package enum SymbolicLinks: Sendable, Hashable {
        /// Any symbolic link refuses the package (the default): app content rarely needs one,
        /// and every link is a way to aim a later write somewhere else.
        case refuse
        /// Links whose target, resolved on bytes from the link's folder, stays inside the
        /// package are created; nothing is ever written through one.
        case allowInside
    }

    /// Total bytes written for all entries.
    package var maxTotalBytes: Int64
    /// The most entries an archive may hold (200,000 by default).
    package var maxEntries: Int
    /// The most bytes unpacked per byte of archive, once more than ``expansionAllowance``
    /// bytes have been unpacked: a gzip bomb grows ~1,000 to 1; real content rarely passes 20.
    package var maxExpansionRatio: Int64
    /// Bytes that may be unpacked before ``maxExpansionRatio`` applies (small archives of
    /// very repetitive data are fine).
    package var expansionAllowance: Int64
    /// Whether symbolic links are refused (the default) or allowed when they stay inside.
    package var symbolicLinks: SymbolicLinks

    /// Limits; the defaults allow 4 GiB, 200,000 entries and 100:1 expansion past 16 MiB, and no links.
    package init(
        maxTotalBytes: Int64 = 4 << 30,
        maxEntries: Int = 200_000,
        maxExpansionRatio: Int64 = 100,
        expansionAllowance: Int64 = 16 << 20,
        symbolicLinks: SymbolicLinks = .refuse
    ) {
        self.maxTotalBytes = maxTotalBytes
        self.maxEntries = maxEntries
        self.maxExpansionRatio = maxExpansionRatio
        self.expansionAllowance = expansionAllowance
        self.symbolicLinks = symbolicLinks
    }
}

/// Writes archive entries into a folder, refusing anything that could reach outside it:
/// `..` and absolute paths (via `BundlePath`, on bytes), names that collide on Apple file
/// systems, symbolic links (unless allowed, and then only those that stay inside), entries
/// written through a link, hard links to anything but an earlier file, and more bytes,
/// entries or expansion than `ExtractionLimits` allow. Everything is created through a
/// `ConfinedFolder`, so a check that missed still could not escape. Every file is hashed as
/// it is written, so the store can record what it installed.
final class ArchiveExtractor {
    /// Which entries are written when not all of them are (a pack's: only the files a sync
    /// still needs), and who hears of each file once it is whole. Entries it does not admit,
    /// links and folders among them, are read past: nothing is made for them.
    struct Filter: Sendable {
        /// Whether the file at `path` (of the size its header gives) is written.
        var admits: @Sendable (_ path: BundlePath, _ size: Int64?) -> Bool
        /// A file written whole, with its digest; such files are not kept in ``records``.
        var written: @Sendable (BundlePath, FileRecord) -> Void
    }

    private let destination: ConfinedFolder
    private let limits: ExtractionLimits
    private let filter: Filter?
    /// The entry being read is one the filter did not admit.
    private var skipping = false
    /// Bytes of archive read so far, for the expansion ratio; set by the reader.
    var archiveBytesRead: Int64 = 0
    private var names = PathCollisionsKeepingPaths()
    private(set) var records: [String: FileRecord] = [:]
    private var links: Set<String> = []
    private var folders: Set<String> = []
    private var entries = 0
    private var totalBytes: Int64 = 0
    /// The file being written; `declared` is `nil` for a stream of unknown length (a `.gz`).
    private var current: (path: BundlePath, file: OutputFile, hasher: ContentHasher, written: Int64, declared: Int64?)?

    init(destination: String, limits: ExtractionLimits, filter: Filter? = nil) throws {
        self.destination = try ConfinedFolder(path: destination)
        self.limits = limits
        self.filter = filter
    }

    func handle(_ event: TarParser.Event) throws {
        switch event {
        case .begin(let entry): try begin(entry)
        case .content(let bytes): try write(bytes)
        case .end: try end()
        }
    }

    func begin(_ entry: ArchiveEntry) throws {
        entries += 1
        guard entries <= limits.maxEntries else {
            throw ArchiveError(.tooLarge, "more than \(limits.maxEntries) entries")
        }
        skipping = false
        guard let path = try ArchivePath.sanitize(entry.path) else { return }  // "./" itself
        if let filter {
            guard case .file = entry.kind, filter.admits(path, entry.size) else {
                skipping = true
                return
            }
        } else {
            // A filter admits only paths it already knows apart (a manifest's, checked for
            // collisions), and no link: the set of every name (12 MB at 100,000) is not needed.
            do { try names.insert(path) } catch { throw ArchiveError(.unsafeEntry, error.reason, entry: entry.path) }
        }
        if let parent = path.parent { try makeFolder(parent, for: entry.path) }
        switch entry.kind {
        case .directory:
            try makeFolder(path, for: entry.path)
        case .file:
            // Compared as what is left, not as a sum: a header may claim up to 2^63 − 1 bytes.
            guard entry.size ?? 0 <= limits.maxTotalBytes - totalBytes else {
                throw ArchiveError(
                    .tooLarge,
                    "the archive unpacks to more than \(limits.maxTotalBytes) bytes",
                    entry: entry.path
                )
            }
            try replaceable(path, entry: entry.path)
            // A filtered archive writes into a version other files are written in too: what
            // an earlier attempt left there is replaced.
            let file = try confined(entry) { () throws(FreshAirError) in
                try destination.createFile(path, replacing: filter != nil)
            }
            current = (path, file, ContentHasher(.sha256), 0, entry.size)
            // A pack's files are a manifest's, which carry no mode: written as a download is.
            if entry.mode & 0o111 != 0, filter == nil { file.setMode(0o755) }
        case .symbolicLink(let linkTarget):
            guard limits.symbolicLinks == .allowInside else {
                throw ArchiveError(
                    .unsafeEntry,
                    "symbolic links are refused (a package can allow links that stay inside: ExtractionLimits.symbolicLinks)",
                    entry: entry.path
                )
            }
            guard ArchivePath.staysInside(linkTarget, from: path) else {
                throw ArchiveError(
                    .unsafeEntry,
                    "link to \"\(linkTarget.debugEscaped)\" points outside the package",
                    entry: entry.path
                )
            }
            try replaceable(path, entry: entry.path)
            try confined(entry) { () throws(FreshAirError) in try destination.makeSymbolicLink(path, target: linkTarget)
            }
            links.insert(path.string)
        case .hardLink(let linkTarget):
            guard let source = try? ArchivePath.sanitize(linkTarget), let record = records[source.string] else {
                throw ArchiveError(
                    .unsafeEntry,
                    "hard link to \"\(linkTarget)\", which is not an earlier file of the package",
                    entry: entry.path
                )
            }
            try replaceable(path, entry: entry.path)
            try confined(entry) { () throws(FreshAirError) in try destination.hardLink(source, at: path) }
            records[path.string] = record
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        if skipping { return }
        guard var entry = current else { throw ArchiveError(.corrupt, "content outside an entry") }
        entry.written += Int64(bytes.count)
        totalBytes += Int64(bytes.count)
        if let declared = entry.declared, entry.written > declared {
            throw ArchiveError(.corrupt, "longer than its header says (\(declared) bytes)", entry: entry.path.string)
        }
        guard totalBytes <= limits.maxTotalBytes else {
            throw ArchiveError(
                .tooLarge,
                "the archive unpacks to more than \(limits.maxTotalBytes) bytes",
                entry: entry.path.string
            )
        }
        let (allowed, overflow) = limits.maxExpansionRatio.multipliedReportingOverflow(by: max(archiveBytesRead, 1))
        if totalBytes > limits.expansionAllowance, !overflow, totalBytes > allowed {
            throw ArchiveError(
                .tooLarge,
                "\(archiveBytesRead) bytes of archive unpack to more than \(totalBytes) bytes, over the "
                    + "\(limits.maxExpansionRatio):1 limit (a decompression bomb?)",
                entry: entry.path.string
            )
        }
        entry.hasher.update(bytes)
        try entry.file.write(bytes)
        current = entry
    }

    func end() throws {
        skipping = false
        guard let entry = current else { return }
        current = nil
        entry.file.close()
        if let declared = entry.declared, entry.written != declared {
            throw ArchiveError(.truncated, "\(entry.written) of \(declared) bytes", entry: entry.path.string)
        }
        let record = FileRecord(hash: entry.hasher.finalize(), size: entry.written)
        if let filter { filter.written(entry.path, record) } else { records[entry.path.string] = record }
    }

    /// Runs a confined write, reporting a refusal as an unsafe entry.
    private func confined<Result>(_ entry: ArchiveEntry, _ body: () throws(FreshAirError) -> Result) throws -> Result {
        do { return try body() } catch {
            if let reason = error.unsafePathReason { throw ArchiveError(.unsafeEntry, reason, entry: entry.path) }
            throw error
        }
    }

    private func makeFolder(_ path: BundlePath, for entry: String) throws {
        guard !folders.contains(path.string) else { return }
        try refuseLinksAbove(path, entry: entry, includingSelf: true)
        if records[path.string] != nil {
            throw ArchiveError(.corrupt, "\"\(path)\" is both a file and a folder", entry: entry)
        }
        do { try destination.makeFolder(path) } catch {
            if let reason = error.unsafePathReason { throw ArchiveError(.unsafeEntry, reason, entry: entry) }
            throw error
        }
        var folder: BundlePath? = path
        while let current = folder, folders.insert(current.string).inserted { folder = current.parent }
    }

    /// Clears the way for an entry that repeats an earlier path (tar's "last one wins").
    private func replaceable(_ path: BundlePath, entry: String) throws {
        try refuseLinksAbove(path, entry: entry, includingSelf: false)
        if folders.contains(path.string) {
            throw ArchiveError(.corrupt, "\"\(path)\" is both a folder and a file", entry: entry)
        }
        if records.removeValue(forKey: path.string) != nil || links.remove(path.string) != nil {
            try destination.remove(path)
        }
    }

    /// Nothing may be written through a link the archive made: it could point anywhere later.
    private func refuseLinksAbove(_ path: BundlePath, entry: String, includingSelf: Bool) throws {
        var folder = includingSelf ? path : path.parent
        while let current = folder {
            if links.contains(current.string) {
                throw ArchiveError(.unsafeEntry, "written through the link \"\(current)\"", entry: entry)
            }
            folder = current.parent
        }
    }
}
