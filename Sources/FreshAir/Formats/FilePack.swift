import Foundation

/// A root manifest's `pack`: one plain `.tar` beside it holding many of the bundle's small
/// files, so a first sync fetches them in one request instead of one each
/// (`"pack": {"path": "files-1f2e3d4c5b6a7988.freshairpack", "size": 45690880}`, written by
/// `breeze generate --pack`).
///
/// The pack only says where bytes may come from, as the layout does: every file taken from it
/// is checked against its own manifest entry (size and SHA-256), and a file the pack lacks, or
/// holds with other bytes, is fetched alone. A device that does not know `pack` ignores it.
package struct FilePack: Sendable, Hashable {
    /// The root manifest's member naming the pack.
    package static let member = "pack"
    /// What a pack file's name ends with; `breeze generate` lists no such file as content.
    package static let suffix = ".freshairpack"
    /// Files of this size or more stay out of a pack: they download alone, and resume when cut.
    package static let largestFile: Int64 = 256 << 10

    /// The name `breeze generate --pack` gives a pack whose bytes have `digest`:
    /// `files-<its first 16 hex digits>.freshairpack`.
    package static func name(digest: ContentHash) -> String { "files-" + digest.hex.prefix(16) + suffix }

    /// Whether `name` is one ``name(digest:)`` gives: a pack that never changes, cached for ever.
    package static func isNamedByDigest(_ name: some StringProtocol) -> Bool {
        guard name.hasPrefix("files-"), name.hasSuffix(suffix) else { return false }
        return ContentHash.isLowercaseHex(name.dropFirst("files-".count).dropLast(suffix.count), digits: 16)
    }

    /// The pack's path beside the root manifest.
    package var path: BundlePath
    /// Its size in bytes, as published: a longer body is refused.
    package var size: Int64

    package init(path: BundlePath, size: Int64) {
        self.path = path
        self.size = size
    }

    /// Reads the pack from a root manifest's top-level members; `nil` when it names none.
    ///
    /// - Throws: a description of what is wrong: a path that is not a plain relative one, a
    ///   size that is not a whole number of bytes.
    init?(document: JSONValue) throws(LayoutProblem) {
        guard let value = document[Self.member] else { return nil }
        guard let text = value["path"]?.string else {
            throw LayoutProblem("\"\(Self.member)\" must be an object with a string \"path\" and a \"size\"")
        }
        do { path = try BundlePath(text) } catch {
            throw LayoutProblem("\"\(Self.member)\".path: \(error.description)")
        }
        guard let size = value["size"]?.integer, size >= 0 else {
            throw LayoutProblem("\"\(Self.member)\".size must be a whole number of bytes")
        }
        self.size = size
    }

    /// The member as a manifest writes it.
    package var json: JSONValue {
        .object([("path", .string(path.string)), ("size", .number(String(size)))])
    }
}
