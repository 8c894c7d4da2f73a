/// The package formats FreshAir reads, told apart by file name as the old libraries did.
package enum ArchiveFormat: String, Sendable, Hashable, Codable, CaseIterable {
    /// `.tgz`, `.tar.gz`: a tar archive, gzip-compressed (one or more gzip members).
    case tarGzip
    /// `.tar`: an uncompressed tar archive (ustar, pax, GNU long names).
    case tar
    /// `.gz`: one gzip-compressed file, installed under the name without `.gz`; or, when what
    /// it holds is a tar archive (`tar -czf content.gz`, as Fresh's README set it up), that
    /// archive's files.
    case gzip
    /// `.zip`: stored or deflated entries.
    case zip

    /// The format a file name implies, or `nil` when it names none of them.
    package init?(fileName: String) {
        let name = fileName.lowercased()
        if name.hasSuffix(".tar.gz") || name.hasSuffix(".tgz") {
            self = .tarGzip
        } else if name.hasSuffix(".tar") {
            self = .tar
        } else if name.hasSuffix(".gz") {
            self = .gzip
        } else if name.hasSuffix(".zip") {
            self = .zip
        } else {
            return nil
        }
    }
}
