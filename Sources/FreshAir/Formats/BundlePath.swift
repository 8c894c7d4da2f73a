package import Foundation

/// A relative path inside a bundle, checked so that it can never leave it.
///
/// A path from a server is bytes, and the kernel splits it on the byte `/` (0x2F). So is
/// every check here: Swift's `Character`s are grapheme clusters, and a "prepend" scalar such
/// as U+0600 before a `/`, or a combining or joining mark (U+0301, U+200D) after it, glues
/// the separator into one `Character`, hiding it from a `Character`-based split while the
/// kernel still sees it.
///
/// Refused: empty paths, absolute paths (a leading `/` or `~`), `.` and `..` components,
/// empty components (`a//b`, a trailing `/`), backslashes, NUL and other control bytes,
/// invalid UTF-8, components over 255 bytes and paths over 1024 bytes.
///
/// Two paths are equal when their bytes are: `é` written precomposed and `e` + U+0301 are
/// two paths here, as they are on Linux. Apple file systems treat them (and `A`/`a`) as one
/// name, so a set of paths that must not collide there goes through `PathCollisions`.
package struct BundlePath: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    /// The path with `/` separators, never starting or ending with one.
    package let string: String

    /// The longest accepted path and component, in UTF-8 bytes.
    package static let maxLength = 1024
    /// The longest name a component may have, in bytes (as most file systems allow).
    package static let maxComponentLength = 255

    /// Why a path was refused.
    package struct Rejection: Error, Sendable, Hashable, CustomStringConvertible {
        /// The path as it was given (escaped when shown).
        package let path: String
        /// Why it was refused.
        package let reason: String
        package var description: String { "unsafe path \"\(path.debugEscaped)\": \(reason)" }

        /// How two names that are one on Apple devices differ, in words: shown as typed, the
        /// two may look the same.
        static func difference(_ one: String, _ other: String) -> String {
            let accents = "Unicode normalization (an accent written as one character in one, as two in the other)"
            if one == other { return accents }  // canonically equivalent: only the encoding differs
            return one.lowercased() == other.lowercased() ? "case" : "case and \(accents)"
        }
    }

    /// Checks `text`; see `BundlePath` for what is refused.
    package init(_ text: String) throws(Rejection) {
        try Self.check(text.utf8, shown: text)
        string = text
    }

    /// A path as raw bytes (an archive header): refused unless it is valid UTF-8 and passes
    /// every check of ``init(_:)``.
    package init(bytes: some Collection<UInt8>) throws(Rejection) {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw Rejection(path: String(decoding: bytes, as: UTF8.self), reason: "it is not valid UTF-8")
        }
        try self.init(text)
    }

    private static let slash = UInt8(ascii: "/")
    private static let dot = UInt8(ascii: ".")

    private static func check(_ bytes: String.UTF8View, shown text: String) throws(Rejection) {
        func reject(_ reason: String) -> Rejection { Rejection(path: text, reason: reason) }
        guard let first = bytes.first else { throw reject("it is empty") }
        if bytes.count > maxLength { throw reject("it is longer than \(maxLength) bytes") }
        if first == slash || first == UInt8(ascii: "~") {
            throw reject("it is absolute; paths are relative to the bundle")
        }
        var componentStart = bytes.startIndex
        var componentLength = 0
        var dots = 0  // how many of the component's bytes so far are '.'
        for index in bytes.indices {
            let byte = bytes[index]
            switch byte {
            case slash:
                try checkComponent(length: componentLength, dots: dots, bytes[componentStart..<index], reject)
                componentStart = bytes.index(after: index)
                componentLength = 0
                dots = 0
                continue
            case UInt8(ascii: "\\"): throw reject("it contains a backslash; use '/' between folders")
            case 0..<0x20, 0x7F: throw reject("it contains a control character")
            case dot: dots += 1
            default: break
            }
            componentLength += 1
        }
        try checkComponent(length: componentLength, dots: dots, bytes[componentStart...], reject)
    }

    private static func checkComponent(
        length: Int,
        dots: Int,
        _ component: Substring.UTF8View,
        _ reject: (String) -> Rejection
    ) throws(Rejection) {
        if length == 0 { throw reject("it has an empty folder name ('//' or a trailing '/')") }
        if dots == length, length <= 2 {
            throw reject("'\(String(Substring(component)))' would step outside the bundle")
        }
        if length > maxComponentLength { throw reject("a name is longer than \(maxComponentLength) bytes") }
    }

    /// The path's components, split on the byte `/`.
    package var components: [Substring] {
        string.utf8.split(separator: Self.slash).map { Substring($0) }
    }

    /// The last component.
    package var lastComponent: Substring {
        guard let slash = string.utf8.lastIndex(of: Self.slash) else { return Substring(string) }
        return string[string.utf8.index(after: slash)...]
    }

    /// How the path of a child manifest ends: `Name.freshair/manifest.json`.
    package static let childManifestSuffix = ".freshair/manifest.json"

    /// `true` for `…/Name.freshair/manifest.json`: a child manifest, followed recursively.
    package var isChildManifest: Bool {
        let suffix = Self.childManifestSuffix.utf8
        return string.utf8.count >= suffix.count && string.utf8.suffix(suffix.count).elementsEqual(suffix)
    }

    /// The folder holding this path, or `nil` at the bundle root.
    package var parent: BundlePath? {
        guard let slash = string.utf8.lastIndex(of: Self.slash) else { return nil }
        return BundlePath(trusted: String(string[..<slash]))
    }

    /// `other` inside this folder.
    package func appending(_ other: BundlePath) -> BundlePath {
        BundlePath(trusted: string + "/" + other.string)
    }

    /// Joins an optional folder prefix with a path.
    static func join(_ prefix: BundlePath?, _ path: BundlePath) -> BundlePath {
        prefix.map { $0.appending(path) } ?? path
    }

    init(trusted: String) { string = trusted }

    /// Where the file is published, below a bundle's base URL (which ends in `/`).
    ///
    /// A path of letters, digits, `-`, `.`, `_`, `~` and `/` needs no percent-encoding, and is
    /// put after the base's text and parsed once: `appendingPathComponent` encodes, then parses
    /// the whole URL again, at three times the cost (1.6 against 0.56 µs here). A sync of
    /// 10,000 small files spent 152 M instructions making URLs, now 81 M. Any other path, or a
    /// base with a query or fragment, goes through `appendingPathComponent` as before.
    package func url(relativeTo base: URL) -> URL {
        if string.utf8.allSatisfy({ URIBytes.isUnreserved($0) || $0 == UInt8(ascii: "/") }) {
            let prefix = base.absoluteString
            if prefix.utf8.last == UInt8(ascii: "/"),
                !prefix.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }),
                let url = URL(string: prefix + string)
            {
                return url
            }
        }
        return base.appendingPathComponent(string)
    }

    package var description: String { string }

    // Equality, hashing and order on bytes: `String`'s own treat canonically equivalent
    // spellings as one, which the kernel does not.
    // Lengths, then the bytes at once where both are contiguous (always, for the native and
    // small strings paths are): element by element, the comparison was 2% of the
    // instructions of a 10,000-file sync, most of it in dictionary lookups.
    package static func == (lhs: BundlePath, rhs: BundlePath) -> Bool {
        let (left, right) = (lhs.string.utf8, rhs.string.utf8)
        guard left.count == right.count else { return false }
        let same = left.withContiguousStorageIfAvailable { left in
            right.withContiguousStorageIfAvailable { right in
                left.count == 0 || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
            }
        }
        return same.flatMap { $0 } ?? left.elementsEqual(right)
    }
    package func hash(into hasher: inout Hasher) {
        let hashed: Void? = string.utf8.withContiguousStorageIfAvailable {
            hasher.combine(bytes: UnsafeRawBufferPointer($0))
        }
        if hashed == nil { for byte in string.utf8 { hasher.combine(byte) } }
    }
    package static func < (lhs: BundlePath, rhs: BundlePath) -> Bool {
        lhs.string.utf8.lexicographicallyPrecedes(rhs.string.utf8)
    }

    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do { self = try BundlePath(text) } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: error.description)
            )
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(string)
    }
}

/// Refuses two paths of one bundle, package or index that name the same file on an Apple
/// file system but not on Linux: they differ only by case (`Read.md`, `read.md`, and, as
/// Unicode case folding has it, `ſ`/`s`, `ς`/`σ`, `ß`/`ss`) or by Unicode normalization (`é`
/// precomposed, `e` + U+0301). APFS is normalization-insensitive everywhere, and a Mac's APFS
/// and HFS+ volumes are case-insensitive by default (an iPhone's APFS is case-sensitive), so
/// on a Mac one of the two would silently replace the other, and which one wins would depend
/// on the order they arrive in. Content is refused on every device alike: it is published once
/// for all of them.
///
/// Folders count too: `Art/a.png` and `art/b.png` land in one folder on a device.
package struct PathCollisions: Sendable {
    // Each name recorded (a path, or a folder above one) is where its first spelling is (the number
    // of a path the caller keeps, and how many of its bytes: a folder is a path's first bytes), and
    // the hash of its folded spelling, found through a table of 4-byte slots: a set of strings cost
    // a string per name at an update's peak. Which hash function does not matter for correctness:
    // names whose hashes match are compared as strings.

    /// Reads path number `place` of the caller's paths.
    package typealias Spellings = (_ place: UInt32) -> ArraySlice<UInt8>

    /// Where each name's first spelling is: a path's number, and its length.
    private var places: [UInt32] = []
    private var lengths: [UInt16] = []
    /// Each name's folded spelling's hash, its low 32 bits (all a table of slots uses).
    private var hashes: [UInt32] = []
    /// Open addressing: a name's number plus one, or 0 for a free slot; a power of two long.
    private var slots: [Int32] = []
    /// Names recorded so far only as a folder above a path: a path of that name is then new,
    /// not a repeat, so that whoever lists it finds a file that is also a folder.
    private var foldersOnly: Set<String> = []
    /// The folder of the last path recorded, itself recorded then (or found with these bytes).
    private var lastFolder: String?

    /// Whether some path kept (answered `true`) is also a folder of another kept path, in
    /// either order. A walk sorts its paths to name the first such pair only when this is set.
    package private(set) var sawFileThatIsAFolder = false

    /// An empty set.
    package init() {}

    /// Whether exactly these bytes were recorded (as a path or a folder).
    package func contains(_ path: BundlePath, spelledIn spellings: Spellings) -> Bool {
        let key = Self.folded(path.string)
        return earlier(key, hash: UInt32(truncatingIfNeeded: key.hashValue), spellings).map {
            spelling($0, spellings) == path
        } ?? false
    }

    /// The spelling a case-insensitive APFS volume compares: Unicode case folding, not
    /// `lowercased()`, which leaves `ſ`, `ς` and `ß` apart from `s`, `σ` and `ss`. ASCII, most
    /// names, takes the short way.
    static func folded(_ name: String) -> String {
        guard name.utf8.allSatisfy({ $0 < 0x80 }) else { return name.folding(options: .caseInsensitive, locale: nil) }
        // Already lower case (most paths): the same string, shared rather than copied.
        return name.utf8.contains { (65...90).contains($0) } ? name.lowercased() : name
    }

    /// Makes room for `count` more paths and folders at once, for a manifest of many entries.
    package mutating func reserveCapacity(_ count: Int) {
        hashes.reserveCapacity(hashes.count + count)
        places.reserveCapacity(places.count + count)
        lengths.reserveCapacity(lengths.count + count)
        grow(toHold: hashes.count + count)
    }

    /// The first spelling of name number `name`.
    private func spelling(_ name: Int, _ spellings: Spellings) -> BundlePath {
        BundlePath(trusted: String(decoding: spellings(places[name]).prefix(Int(lengths[name])), as: UTF8.self))
    }

    /// The number of the name recorded under `key`, a folded spelling whose hash is `hash`.
    private func earlier(_ key: String, hash: UInt32, _ spellings: Spellings) -> Int? {
        guard !slots.isEmpty else { return nil }
        var slot = Int(hash) & (slots.count - 1)
        while slots[slot] != 0 {
            let name = Int(slots[slot]) - 1
            // `String` equality is canonical: a name that folds to itself but for normalization
            // (a decomposed "é") is found, and told apart by its bytes.
            if hashes[name] == hash, Self.folded(spelling(name, spellings).string) == key { return name }
            slot = (slot + 1) & (slots.count - 1)
        }
        return nil
    }

    /// Records a name whose folded spelling's hash is `hash`, spelled by path `place`'s first
    /// `length` bytes.
    private mutating func record(place: UInt32, length: Int, hash: UInt32) {
        grow(toHold: hashes.count + 1)
        precondition(hashes.count < Int32.max, "more names than a set can hold")
        precondition(length <= Int(UInt16.max), "a path longer than a set can hold")
        places.reserveGently(1)
        places.append(place)
        lengths.reserveGently(1)
        lengths.append(UInt16(length))
        hashes.reserveGently(1)
        hashes.append(hash)
        self.place(hashes.count - 1)
    }

    private mutating func place(_ name: Int) {
        var slot = Int(hashes[name]) & (slots.count - 1)
        while slots[slot] != 0 { slot = (slot + 1) & (slots.count - 1) }
        slots[slot] = Int32(name + 1)
    }

    /// Keeps at least an eighth of the slots free for `names` names. A quarter free doubled the
    /// slots (to 2 MB) for 200,000 names, at the peak of a sync's memory; at 200,000 names the
    /// table is now 77% full, where a new name passes 10 slots on average and a known one 3.
    private mutating func grow(toHold names: Int) {
        guard names * 8 > slots.count * 7 else { return }
        var size = Swift.max(16, slots.count)
        while names * 8 > size * 7 { size *= 2 }
        slots = [Int32](repeating: 0, count: size)
        for name in hashes.indices { place(name) }
    }

    /// Records `path` and every folder above it. When it answers `true`, the caller keeps
    /// `path` as its path number `place`, where `spellings` finds it from then on; otherwise
    /// nothing was recorded.
    ///
    /// - Returns: `false` when exactly these bytes were recorded already (a repeated entry); `true`
    ///   for a path recorded so far only as a folder, in whichever order the two come.
    /// - Throws: when `path` or one of its folders differs from an earlier one only by case or
    ///   normalization.
    @discardableResult
    package mutating func insert(
        _ path: BundlePath,
        as place: UInt32,
        spelledIn spellings: Spellings
    ) throws(BundlePath.Rejection) -> Bool {
        // Looked up first, recorded after: a path refused leaves nothing behind, and a name is
        // never read from a place the caller does not keep yet. The new names are the path and
        // the folders above it up to the first one seen before.
        var current: BundlePath? = path
        var (newNames, pathHash) = (0, UInt32(0))
        while let entry = current {
            // Paths come sorted, mostly: one in the last path's folder needs that folder looked
            // up no further. Compared as bytes: `==` is blind to normalization.
            if newNames == 1, let lastFolder, entry.string.utf8.elementsEqual(lastFolder.utf8) { break }
            // `String` equality and hashing are canonical, so the folded key also catches
            // normalization.
            let key = Self.folded(entry.string)
            let hash = UInt32(truncatingIfNeeded: key.hashValue)
            if let name = earlier(key, hash: hash, spellings) {
                let earlier = spelling(name, spellings)
                // A folder seen before: the folders above it were recorded then.
                guard earlier != entry else {
                    if newNames == 0 {
                        // A file named as a folder recorded before: kept, and the two clash.
                        guard foldersOnly.remove(entry.string) != nil else { return false }
                        sawFileThatIsAFolder = true
                        return true
                    }
                    // A folder of this path recorded before as a file.
                    if !foldersOnly.contains(entry.string) { sawFileThatIsAFolder = true }
                    break
                }
                throw BundlePath.Rejection(
                    path: path.string,
                    reason:
                        "\"\(entry.string.debugEscaped)\" and \"\(earlier.string.debugEscaped)\" differ only by "
                        + BundlePath.Rejection.difference(entry.string, earlier.string)
                        + ", and are one name on Apple devices; rename one"
                )
            }
            if newNames == 0 { pathHash = hash }
            newNames += 1
            current = entry.parent
        }
        record(place: place, length: path.string.utf8.count, hash: pathHash)
        var folder = path.parent
        lastFolder = folder?.string
        for _ in 1..<newNames {
            let key = Self.folded(folder!.string)
            record(place: place, length: folder!.string.utf8.count, hash: UInt32(truncatingIfNeeded: key.hashValue))
            foldersOnly.insert(folder!.string)
            folder = folder!.parent
        }
        return true
    }
}

/// A ``PathCollisions`` that keeps the paths itself, for a caller that keeps no list of its
/// own: an archive's entries, a repository's bundles.
package struct PathCollisionsKeepingPaths: Sendable {
    private var collisions = PathCollisions()
    private var paths = PathList()

    package init() {}

    /// See ``PathCollisions/insert(_:as:spelledIn:)``.
    @discardableResult
    package mutating func insert(_ path: BundlePath) throws(BundlePath.Rejection) -> Bool {
        // Moved out while it changes, so that it is not copied, and the paths read in place.
        var collisions = self.collisions
        self.collisions = PathCollisions()
        defer { self.collisions = collisions }
        let isNew = try collisions.insert(path, as: UInt32(paths.count)) { paths.bytes(at: Int($0)) }
        if isNew { paths.append(path.string.utf8) }
        return isNew
    }

    /// See ``PathCollisions/contains(_:spelledIn:)``.
    package func contains(_ path: BundlePath) -> Bool {
        collisions.contains(path) { paths.bytes(at: Int($0)) }
    }

    /// See ``PathCollisions/sawFileThatIsAFolder``.
    package var sawFileThatIsAFolder: Bool { collisions.sawFileThatIsAFolder }
}

extension String {
    /// The string as a person typed it, with only what a terminal would act on escaped
    /// (``PrintableText``): names in messages.
    var debugEscaped: String { PrintableText.escaped(self) }
}
