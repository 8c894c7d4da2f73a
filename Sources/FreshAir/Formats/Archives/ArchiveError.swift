/// Why an archive was refused. Nothing from a refused archive reaches the live location.
package struct ArchiveError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong with an archive.
    package enum Kind: Sendable, Hashable {
        /// Not valid gzip, tar or zip data, or a checksum that does not match.
        case corrupt
        /// The data ends before the archive does.
        case truncated
        /// An entry would land outside the destination (`..`, an absolute path, a link out).
        case unsafeEntry
        /// Device files, FIFOs and other entries that have no place in app content.
        case unsupportedEntry
        /// More bytes or entries than the configured cap (a decompression bomb?).
        case tooLarge
    }

    /// What was wrong.
    package var kind: Kind
    /// The details, naming the entry when there is one.
    package var message: String
    /// The entry concerned, when there is one.
    package var entry: String?

    /// An error of `kind`, about `entry` when given.
    package init(_ kind: Kind, _ message: String, entry: String? = nil) {
        self.kind = kind
        self.message = message
        self.entry = entry
    }

    /// The entry and the message, each control character written as `\u{1B}`: an archive's
    /// names and fields are its author's, and they reach logs and terminals (a bundle's pack
    /// that fails is named in `breeze sync`'s summary), where an escape sequence would run.
    package var description: String {
        Self.printable((entry.map { "\($0): " } ?? "") + message)
    }

    /// `text` with its control and bidirectional formatting characters escaped (``PrintableText``).
    static func printable(_ text: String) -> String { PrintableText.escaped(text) }
}
