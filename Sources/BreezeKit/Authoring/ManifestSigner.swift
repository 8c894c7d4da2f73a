import Crypto
package import Foundation
package import FreshAir

/// An Ed25519 private key that signs root manifests (`breeze keygen`, `breeze sign`).
///
/// Kept in a text file of its own, readable by its owner only:
///
/// ```
/// # FreshAir Ed25519 signing key. Keep it secret. Apps pin the public key:
/// # public: Vx4R…=
/// 3q2+7w…=
/// ```
package struct SigningKey: Sendable {
    /// The key's 32-byte seed (Crypto's key type is not `Sendable`; this is).
    private let seed: Data
    private var privateKey: Curve25519.Signing.PrivateKey {
        try! Curve25519.Signing.PrivateKey(rawRepresentation: seed)
    }

    /// A new random key.
    package static func generate() -> SigningKey { SigningKey(privateKey: Curve25519.Signing.PrivateKey()) }

    /// The public half, as apps pin it.
    package var publicKey: TrustedKey { TrustedKey(privateKey.publicKey) }

    /// Reads a key file written by ``write(to:)``: a file, or a stream such as `/dev/stdin` or a
    /// pipe (read to its end: Foundation's file reading refuses a descriptor with no size).
    package init(contentsOf url: URL) throws {
        let text: String
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            text = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        } catch {
            guard FileManager.default.fileExists(atPath: url.path) else {
                throw SigningError(
                    "\(url.path): no such signing key file (`breeze keygen FILE` writes one)",
                    kind: .missingFile
                )
            }
            throw SigningError(
                "cannot read the signing key \(url.path): \(FileErrorWords.reason(error) ?? "\(error)")",
                kind: .cannotWrite
            )
        }
        try self.init(text: text, origin: url.path)
    }

    /// Reads a key from the text of a key file (an environment variable's value, say);
    /// `origin` names where it came from in the error.
    package init(text: String, origin: String) throws {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let line = lines.first(where: { !$0.isEmpty && !$0.hasPrefix("#") }),
            let seed = Data(base64Encoded: line),
            let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        else { throw SigningError("\(origin) is not a signing key written by `breeze keygen`") }
        // A public key is 32 bytes of base64 too: only keygen's own lines tell a key file from
        // the public key it printed, which would otherwise sign with a secret everyone has.
        guard lines.contains(where: { $0.hasPrefix(Self.fileHeader) || $0.hasPrefix("# public:") }) else {
            throw SigningError(
                "\(origin) holds a line of base64 but none of the lines `breeze keygen` writes around a secret key: "
                    + "it looks like the public key keygen prints, which apps pin and which cannot sign. Give the key "
                    + "file keygen wrote (its first line is \"\(Self.fileHeader)\")"
            )
        }
        self.init(privateKey: key)
        // A key file names its public half: a private key that is not its pair was edited or
        // pasted over (a public key in its place signs with a secret everyone has).
        if let named = lines.first(where: { $0.hasPrefix("# public:") })?.dropFirst("# public:".count)
            .trimmingCharacters(in: .whitespaces), named != publicKey.base64
        {
            throw SigningError(
                "\(origin) holds a private key whose public key is \(publicKey.base64), not the \(named) its '# public:' line names: the file was changed; use the key file `breeze keygen` wrote"
            )
        }
    }

    /// Whether this key's 32 secret bytes are, in base64, `publicKey`: a public key given where
    /// its private key belongs, which would sign with a secret anyone can read from the release.
    func isPublicKey(_ publicKey: String) -> Bool { seed.base64EncodedString() == publicKey }

    private init(privateKey: Curve25519.Signing.PrivateKey) { seed = privateKey.rawRepresentation }

    /// The first line of every key file; `breeze publish` refuses to upload such a file.
    static let fileHeader = "# FreshAir Ed25519 signing key."

    /// Writes the key file (mode 0600), refusing to replace an existing file.
    package func write(to url: URL) throws {
        let text = """
            \(Self.fileHeader) Keep it secret. Apps pin the public key:
            # public: \(publicKey.base64)
            \(privateKey.rawRepresentation.base64EncodedString())

            """
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            throw SigningError(
                errno == EEXIST
                    ? "\(url.path) exists; a signing key is never overwritten (move it away first)"
                    : "cannot create \(url.path): \(String(cString: strerror(errno)))",
                kind: .cannotWrite
            )
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try handle.write(contentsOf: Data(text.utf8))
    }

    func sign(_ message: [UInt8]) throws -> ManifestSignature {
        ManifestSignature(key: publicKey.base64, signature: try privateKey.signature(for: message))
    }
}

/// `breeze sign BUNDLE`: signs a bundle's root manifest as a release (see ``ReleaseSigning``).
///
/// The bundle must be current first (every digest right, none missing: `breeze hash`), since
/// devices that pin keys refuse entries without digests. A legacy array manifest moves to the
/// object form; `identity` defaults to the bundle folder's name, which is what apps expect.
package enum ManifestSigner {
    /// Signs `bundle`'s root manifest with `key`, after checking every digest is current.
    ///
    /// - Throws: ``SigningError`` when entries are stale or missing (run `breeze hash`).
    package static func sign(
        bundle: URL,
        with key: SigningKey,
        options: SigningOptions = SigningOptions()
    ) async throws -> SigningReport {
        try await sign(bundle: bundle, with: [key], options: options)
    }

    /// Signs `bundle`'s root manifest with every key in `keys` (several signers of one release).
    package static func sign(
        bundle: URL,
        with keys: [SigningKey],
        options: SigningOptions = SigningOptions()
    ) async throws -> SigningReport {
        let root = bundle.standardizedFileURL
        let check = try await BundleHasher.run(bundle: root, check: true)
        guard check.stale.isEmpty, check.missing.isEmpty else {
            throw SigningError(
                "\(check.stale.count) stale and \(check.missing.count) missing entries: run `breeze hash` (and fix what is missing) before signing"
            )
        }
        var document = try ManifestDocument(bundle: root, folder: "")
        let existing = try Manifest(data: document.original, source: document.url.path)
        var converted = false
        if !options.cosign, case .array(let entries) = document.json {
            document.json = .object([("format", JSONValue(2)), ("files", .array(entries))])
            converted = true
        }
        if let layout = options.layout, layout != existing.layout {
            guard !options.cosign else {
                throw SigningError(
                    "--layout changes what the other signers signed: sign the release anew, without --cosign"
                )
            }
            if case .objects = layout {
                do { _ = try ObjectLayout.objects(of: root) } catch let error as PublishError {
                    throw SigningError(error.description)
                }
            }
            ObjectLayout.record(layout, in: &document.json)
        }
        var report = try ReleaseSigning.sign(
            &document.json,
            existing: existing.release,
            with: keys,
            options: options,
            defaultIdentity: root.lastPathComponent
        )
        report.convertedToObjectForm = converted
        try document.save()
        return report
    }
}

extension ManifestSigner {
    /// A signature whose `key` no device can read as a key: every check that reads signers says so in these words.
    static func notAKey(_ name: String) -> String {
        "a signature names \"\(name)\", which is not an Ed25519 public key"
    }

    /// What devices pinning the signers' keys would refuse in a signed root manifest: a
    /// signature that no longer matches the content, or an entry without a digest.
    static func signatureProblems(_ manifest: Manifest) -> [String] {
        guard !manifest.signatures.isEmpty, let message = manifest.signedMessage else { return [] }
        var problems: [String] = []
        for signature in manifest.signatures {
            guard let key = try? TrustedKey(base64: signature.key) else {
                problems.append(notAKey(signature.key))
                continue
            }
            if !key.verifies(signature.signature, for: message) {
                problems.append("the signature by \(signature.key) does not match the content: run `breeze sign` again")
            }
        }
        if let unhashed = manifest.entries.first(where: { $0.hash == nil }) {
            problems.append(
                "signed, but \"\(unhashed.path)\" has no digest: devices that pin keys refuse it (run `breeze hash`)"
            )
        }
        return problems
    }
}

/// A key or signature problem, saying what to do.
package struct SigningError: Error, CustomStringConvertible {
    /// What went wrong, for the exit code: the content or key is not fit (the default), a key
    /// file is missing, or one cannot be written.
    package enum Kind: Sendable { case content, missingFile, cannotWrite }

    package let description: String
    package let kind: Kind
    package init(_ description: String, kind: Kind = .content) {
        self.description = description
        self.kind = kind
    }
}
