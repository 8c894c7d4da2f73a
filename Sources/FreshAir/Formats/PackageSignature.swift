package import Foundation

/// A package's signed document, `<package>.sig` beside it, written by `breeze sign
/// content.tgz`: what the package is (SHA-256 and size) and which release (see
/// `ReleaseFields`).
///
/// ```json
/// {"format": 1, "identity": "content.tgz", "sequence": 4, "expires": "2026-12-23T10:00:00Z",
///  "sha256": "9f86…", "size": 5120, "signatures": [{"key": "Vx4R…=", "sig": "…"}]}
/// ```
///
/// A device that pins keys fetches it first, conditionally: a `304` proves the installed
/// package is current; otherwise the package is downloaded and checked against the signed
/// digest and size while it streams. The package itself is never trusted for what it says.
///
/// A `.tar` package's document can also name its chunk index (`"chunks": {"sha256": …,
/// "size": …}`, `<package>.freshair-chunks` beside it): a device that installed an earlier
/// package then fetches only the chunks it lacks (see `ChunkIndex`).
package struct PackageSignature: Sendable, Hashable {
    /// A file the document vouches for besides the package: its SHA-256 and size.
    package struct SignedFile: Sendable, Hashable {
        /// SHA-256 of the file.
        package var sha256: ContentHash
        /// The file's size in bytes.
        package var size: Int64

        /// A file with `sha256` and `size`.
        package init(sha256: ContentHash, size: Int64) {
            self.sha256 = sha256
            self.size = size
        }

        /// The `sha256` and `size` members of `object`, or `nil` when either is missing or malformed.
        init?(members object: JSONValue) {
            guard let digest = object["sha256"]?.string.flatMap(ContentHash.init(hex:)), digest.algorithm == .sha256,
                let size = object["size"]?.integer, size >= 0
            else { return nil }
            self.init(sha256: digest, size: size)
        }
    }

    /// What follows the package's file name: `content.tgz.sig`.
    package static let suffix = ".sig"

    /// SHA-256 of the package file.
    package var sha256: ContentHash
    /// The package file's size in bytes.
    package var size: Int64
    /// The package's chunk index, `<package>.freshair-chunks`, when it has one.
    package var chunkIndex: SignedFile?
    /// Identity, sequence, expiry and signatures.
    package var release: ReleaseFields

    /// A document for a package with `sha256` and `size` (and a chunk index, when given).
    package init(sha256: ContentHash, size: Int64, chunkIndex: SignedFile? = nil, release: ReleaseFields) {
        self.sha256 = sha256
        self.size = size
        self.chunkIndex = chunkIndex
        self.release = release
    }

    /// Reads a `.sig` document, naming `source` in errors.
    package init(data: Data, source: String) throws(ManifestError) {
        let document: JSONValue
        do { document = try JSONReader.parse(data) } catch {
            throw ManifestError(source: source, problem: .invalidJSON(error))
        }
        guard let package = SignedFile(members: document) else {
            throw ManifestError(
                source: source,
                problem: .unexpectedShape(
                    "expected {\"sha256\": \"<64 hex digits>\", \"size\": <bytes>, …} as a package's signed document has"
                )
            )
        }
        var chunkIndex: SignedFile?
        if let chunks = document["chunks"] {
            guard let named = SignedFile(members: chunks) else {
                throw ManifestError(
                    source: source,
                    problem: .unexpectedShape(
                        "expected \"chunks\": {\"sha256\": \"<64 hex digits>\", \"size\": <bytes>} naming the chunk index"
                    )
                )
            }
            chunkIndex = named
        }
        self.init(
            sha256: package.sha256,
            size: package.size,
            chunkIndex: chunkIndex,
            release: try ReleaseFields(document: document, source: source)
        )
    }

    /// The document without signatures, in the order `breeze sign` writes it.
    package var unsignedJSON: JSONValue {
        var pairs: [(key: String, value: JSONValue)] = [("format", JSONValue(1))]
        if let identity = release.identity { pairs.append(("identity", .string(identity))) }
        if let sequence = release.sequence { pairs.append(("sequence", JSONValue(sequence))) }
        if let expires = release.expires { pairs.append(("expires", .string(expires.formatted(.iso8601)))) }
        pairs += [("sha256", .string(sha256.hex)), ("size", JSONValue(size))]
        if let chunkIndex {
            pairs.append(
                ("chunks", .object([("sha256", .string(chunkIndex.sha256.hex)), ("size", JSONValue(chunkIndex.size))]))
            )
        }
        return .object(pairs)
    }
}
