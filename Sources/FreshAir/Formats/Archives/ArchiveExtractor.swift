import Foundation

/// Caps that stop hostile or runaway archives (gzip bombs, millions of entries).
public struct ExtractionLimits: Sendable, Hashable {
    /// Total bytes written for all entries.
    public var maxTotalBytes: Int64
    public var maxEntries: Int

    public init(maxTotalBytes: Int64 = 8 << 30, maxEntries: Int = 1_000_000) {
        self.maxTotalBytes = maxTotalBytes
        self.maxEntries = maxEntries
    }
}

/// Writes archive entries into a folder, refusing anything that could reach outside it:
/// `..` and absolute paths (via ``BundlePath``), links whose target leaves the folder,
/// entries written through a link, hard links to anything but an earlier file, and more
/// bytes or entries than ``ExtractionLimits`` allow. Every file is hashed as it is written,
/// so the store can record what it installed.
final class ArchiveExtractor {
    private let destination: String
    private let limits: ExtractionLimits
    private(set) var records: [String: FileRecord] = [:]
    private var links: Set<String> = []
    private var folders: Set<String> = []
    private var entries = 0
    private var totalBytes: Int64 = 0
    /// The file being written; `declared` is `nil` for a stream of unknown length (a `.gz`).
    private var current: (path: BundlePath, file: OutputFile, hasher: ContentHasher, written: Int64, declared: Int64?)?

    init(destination: String, limits: ExtractionLimits) {
        self.destination = destination
        self.limits = limits
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
        guard let path = try Self.sanitize(entry.path) else { return }  // "./" itself
        if let parent = path.parent { try makeFolder(parent, for: entry.path) }
        let target = destination + "/" + path.string
        switch entry.kind {
        case .directory:
            try makeFolder(path, for: entry.path)
        case .file:
            guard totalBytes + (entry.size ?? 0) <= limits.maxTotalBytes else {
                throw ArchiveError(.tooLarge, "the archive unpacks to more than \(limits.maxTotalBytes) bytes", entry: entry.path)
            }
            try replaceable(path, entry: entry.path)
            let file = try OutputFile(path: target, append: false)
            current = (path, file, ContentHasher(.sha256), 0, entry.size)
            if entry.mode & 0o111 != 0 { chmod(target, 0o755) }
        case .symbolicLink(let linkTarget):
            guard Self.staysInside(linkTarget, from: path) else {
                throw ArchiveError(.unsafeEntry, "link to \"\(linkTarget)\" points outside the package", entry: entry.path)
            }
            try replaceable(path, entry: entry.path)
            guard symlink(linkTarget, target) == 0 else { throw Disk.failure("create link", target) }
            links.insert(path.string)
        case .hardLink(let linkTarget):
            guard let source = try? Self.sanitize(linkTarget), let record = records[source.string] else {
                throw ArchiveError(.unsafeEntry, "hard link to \"\(linkTarget)\", which is not an earlier file of the package", entry: entry.path)
            }
            try replaceable(path, entry: entry.path)
            try Disk.link(destination + "/" + source.string, to: target)
            records[path.string] = record
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard var entry = current else { throw ArchiveError(.corrupt, "content outside an entry") }
        entry.written += Int64(bytes.count)
        totalBytes += Int64(bytes.count)
        if let declared = entry.declared, entry.written > declared {
            throw ArchiveError(.corrupt, "longer than its header says (\(declared) bytes)", entry: entry.path.string)
        }
        guard totalBytes <= limits.maxTotalBytes else {
            throw ArchiveError(.tooLarge, "the archive unpacks to more than \(limits.maxTotalBytes) bytes", entry: entry.path.string)
        }
        entry.hasher.update(bytes)
        try entry.file.write(bytes)
        current = entry
    }

    func end() throws {
        guard let entry = current else { return }
        current = nil
        entry.file.close()
        if let declared = entry.declared, entry.written != declared {
            throw ArchiveError(.truncated, "\(entry.written) of \(declared) bytes", entry: entry.path.string)
        }
        records[entry.path.string] = FileRecord(hash: entry.hasher.finalize(), size: entry.written)
    }

    /// Archive paths may start with `./` and folders end with `/`; anything else unusual is
    /// refused. Returns `nil` for the archive's own root (`./`).
    static func sanitize(_ raw: String) throws(ArchiveError) -> BundlePath? {
        var text = Substring(raw)
        while text.hasPrefix("./") { text = text.dropFirst(2) }
        while text.hasSuffix("/") { text = text.dropLast() }
        if text.isEmpty || text == "." { return nil }
        do { return try BundlePath(String(text)) } catch {
            throw ArchiveError(.unsafeEntry, error.reason, entry: raw)
        }
    }

    /// Whether a relative link target, resolved from the link's folder, stays inside.
    static func staysInside(_ target: String, from link: BundlePath) -> Bool {
        guard !target.hasPrefix("/"), !target.isEmpty else { return false }
        var depth = link.components.count - 1
        for component in target.split(separator: "/", omittingEmptySubsequences: true) {
            switch component {
            case ".": continue
            case "..": depth -= 1
            default: depth += 1
            }
            if depth < 0 { return false }
        }
        return true
    }

    private func makeFolder(_ path: BundlePath, for entry: String) throws {
        guard !folders.contains(path.string) else { return }
        try refuseLinksAbove(path, entry: entry, includingSelf: true)
        if records[path.string] != nil { throw ArchiveError(.corrupt, "\"\(path)\" is both a file and a folder", entry: entry) }
        try Disk.createDirectory(destination + "/" + path.string)
        var folder: BundlePath? = path
        while let current = folder, folders.insert(current.string).inserted { folder = current.parent }
    }

    /// Clears the way for an entry that repeats an earlier path (tar's "last one wins").
    private func replaceable(_ path: BundlePath, entry: String) throws {
        try refuseLinksAbove(path, entry: entry, includingSelf: false)
        if folders.contains(path.string) { throw ArchiveError(.corrupt, "\"\(path)\" is both a folder and a file", entry: entry) }
        if records.removeValue(forKey: path.string) != nil || links.remove(path.string) != nil {
            try Disk.remove(destination + "/" + path.string)
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
