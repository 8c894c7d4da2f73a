import Crypto
import Foundation
import FreshAir

/// An Ed25519 private key that signs root manifests (`breeze keygen`, `breeze sign`).
///
/// Kept in a text file of its own, readable by its owner only:
///
/// ```
/// # FreshAir Ed25519 signing key. Keep it secret. Apps pin the public key:
/// # public: Vx4R…=
/// 3q2+7w…=
/// ```
public struct SigningKey: Sendable {
    /// The key's 32-byte seed (Crypto's key type is not `Sendable`; this is).
    private let seed: Data
    private var privateKey: Curve25519.Signing.PrivateKey { try! Curve25519.Signing.PrivateKey(rawRepresentation: seed) }

    /// A new random key.
    public static func generate() -> SigningKey { SigningKey(privateKey: Curve25519.Signing.PrivateKey()) }

    /// The public half, as apps pin it.
    public var publicKey: TrustedKey { TrustedKey(privateKey.publicKey) }

    /// Reads a key file written by ``write(to:)``.
    public init(contentsOf url: URL) throws {
        let text: String
        do { text = try String(contentsOf: url, encoding: .utf8) } catch {
            throw SigningError("cannot read the signing key \(url.path): \(error.localizedDescription)")
        }
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let line = lines.first(where: { !$0.isEmpty && !$0.hasPrefix("#") }), let seed = Data(base64Encoded: line),
              let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        else { throw SigningError("\(url.path) is not a signing key written by `breeze keygen`") }
        self.init(privateKey: key)
    }

    private init(privateKey: Curve25519.Signing.PrivateKey) { seed = privateKey.rawRepresentation }

    /// The first line of every key file; `breeze publish` refuses to upload such a file.
    static let fileHeader = "# FreshAir Ed25519 signing key."

    /// Writes the key file (mode 0600), refusing to replace an existing file.
    public func write(to url: URL) throws {
        let text = """
            \(Self.fileHeader) Keep it secret. Apps pin the public key:
            # public: \(publicKey.base64)
            \(privateKey.rawRepresentation.base64EncodedString())

            """
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            throw SigningError(errno == EEXIST
                ? "\(url.path) exists; a signing key is never overwritten (move it away first)"
                : "cannot create \(url.path): \(String(cString: strerror(errno)))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try handle.write(contentsOf: Data(text.utf8))
    }

    func sign(_ message: [UInt8]) throws -> ManifestSignature {
        ManifestSignature(key: publicKey.base64, signature: try privateKey.signature(for: message))
    }
}

/// `breeze sign`: signs a bundle's root manifest for one release.
///
/// The bundle must be current first (every digest right, none missing: `breeze hash`), since
/// devices that pin keys refuse entries without digests. Each signing is a new release to
/// devices: the `sequence` moves on (a legacy array manifest moves to the object form with
/// `sequence: 1`), `expires` is set (30 days by default) and `identity` names the bundle (its
/// folder's name by default), and every earlier signature is dropped, since it covered other
/// content. A second signer of the same release adds a signature with ``Options/cosign``:
/// nothing else changes, and the signatures already there must still match.
public enum ManifestSigner {
    /// How to sign.
    public struct Options: Sendable {
        /// Add signatures to the release as it stands (another key of the same publisher).
        public var cosign = false
        /// How long devices accept the manifest before a fresh one must be published.
        public var validity: Duration = .seconds(30 * 86_400)
        /// What the manifest is signed for; `nil`: the bundle folder's name.
        public var identity: String?
        /// The sequence to sign; `nil`: the next one.
        public var sequence: Int?

        public init(cosign: Bool = false, validity: Duration = .seconds(30 * 86_400), identity: String? = nil, sequence: Int? = nil) {
            self.cosign = cosign
            self.validity = validity
            self.identity = identity
            self.sequence = sequence
        }
    }

    /// What signing did.
    public struct Report: Sendable, Codable {
        /// The public keys that signed.
        public var keys: [String]
        /// Keys whose signatures were kept alongside (``Options/cosign``).
        public var kept: [String] = []
        /// Signatures dropped because they covered an earlier release.
        public var dropped = 0
        /// The root manifest moved from the array form to the object form.
        public var convertedToObjectForm = false
        /// The root manifest's `sequence`, `expires` and `identity` as signed.
        public var sequence: Int?
        public var expires: Date?
        public var identity: String?
    }

    /// Signs `bundle`'s root manifest with `key`, after checking every digest is current.
    ///
    /// - Throws: ``SigningError`` when entries are stale or missing (run `breeze hash`).
    public static func sign(bundle: URL, with key: SigningKey, options: Options = Options()) async throws -> Report {
        try await sign(bundle: bundle, with: [key], options: options)
    }

    /// Signs `bundle`'s root manifest with every key in `keys` (a threshold of signers).
    public static func sign(bundle: URL, with keys: [SigningKey], options: Options = Options()) async throws -> Report {
        guard !keys.isEmpty else { throw SigningError("no signing key given") }
        let root = bundle.standardizedFileURL
        let check = try await BundleHasher.run(bundle: root, check: true)
        guard check.stale.isEmpty, check.missing.isEmpty else {
            throw SigningError("\(check.stale.count) stale and \(check.missing.count) missing entries: run `breeze hash` (and fix what is missing) before signing")
        }
        var document = try ManifestDocument(bundle: root, folder: "")
        let existing = try Manifest(data: document.original, source: document.url.path)
        var report = Report(keys: keys.map(\.publicKey.base64))
        let signingKeys = Set(report.keys)
        var signatures: [ManifestSignature] = []
        if options.cosign {
            guard let message = existing.signedMessage, !existing.signatures.isEmpty, existing.identity != nil, existing.sequence != nil,
                  existing.expires != nil
            else { throw SigningError("--cosign adds a signature to a signed release; this manifest has none yet: sign it without --cosign first") }
            for signature in existing.signatures where !signingKeys.contains(signature.key) {
                guard let other = try? TrustedKey(base64: signature.key), other.verifies(signature.signature, for: message) else {
                    throw SigningError("the manifest changed since \(signature.key) signed it: sign it again without --cosign (a new release)")
                }
                signatures.append(signature)
                report.kept.append(signature.key)
            }
        } else {
            if case .array(let entries) = document.json {
                document.json = .object([("format", JSONValue(2)), ("files", .array(entries))])
                report.convertedToObjectForm = true
            }
            let sequence = options.sequence ?? (existing.sequence ?? 0) + 1
            if let current = existing.sequence, sequence <= current {
                throw SigningError("--sequence \(sequence) is not above the manifest's \(current): devices would refuse it")
            }
            let expires = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + Double(options.validity.components.seconds)).rounded(.down))
            document.json.set("identity", .string(options.identity ?? root.lastPathComponent), after: "format")
            document.json.set("sequence", JSONValue(sequence), after: "identity")
            document.json.set("expires", .string(expires.formatted(.iso8601)), after: "sequence")
            report.dropped = existing.signatures.count
        }
        report.sequence = document.json["sequence"]?.integer.map(Int.init)
        report.expires = document.json["expires"]?.string.flatMap { ISO8601DateFormatter().date(from: $0) }
        report.identity = document.json["identity"]?.string

        let message = ManifestSignature.message(for: document.json)
        for key in keys { signatures.append(try key.sign(message)) }
        document.json.set(ManifestSignature.member, .array(signatures.map(\.json)))
        try document.save()
        return report
    }
}

extension ManifestSigner {
    /// What devices pinning the signers' keys would refuse in a signed root manifest: a
    /// signature that no longer matches the content, or an entry without a digest.
    static func signatureProblems(_ manifest: Manifest) -> [String] {
        guard !manifest.signatures.isEmpty, let message = manifest.signedMessage else { return [] }
        var problems: [String] = []
        for signature in manifest.signatures {
            guard let key = try? TrustedKey(base64: signature.key) else {
                problems.append("a signature names \"\(signature.key)\", which is not an Ed25519 public key")
                continue
            }
            if !key.verifies(signature.signature, for: message) {
                problems.append("the signature by \(signature.key) does not match the content: run `breeze sign` again")
            }
        }
        if let unhashed = manifest.entries.first(where: { $0.hash == nil }) {
            problems.append("signed, but \"\(unhashed.path)\" has no digest: devices that pin keys refuse it (run `breeze hash`)")
        }
        return problems
    }
}

/// A key or signature problem, saying what to do.
public struct SigningError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
