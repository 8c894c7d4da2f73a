package import Crypto
public import Foundation

/// An Ed25519 public key an app pins (``SyncConfiguration/trustedKeys``): a sync then accepts
/// only root manifests that carry a valid signature by one of its keys.
///
/// `breeze keygen` prints the key in this form (base64 of its 32 bytes):
///
/// ```swift
/// configuration.trustedKeys = [try TrustedKey(base64: "Vx4R…=")]
/// ```
public struct TrustedKey: Sendable, Hashable, CustomStringConvertible {
    /// The key's 32 bytes.
    public let rawRepresentation: Data

    /// - Throws: an error saying the text is not base64 of 32 bytes.
    public init(base64: String) throws {
        try self.init(parsing: base64)
    }

    /// The same, with the error's type known inside the package.
    package init(parsing base64: String) throws(ManifestSignature.KeyError) {
        guard let raw = Data(base64Encoded: base64.trimmingCharacters(in: .whitespacesAndNewlines)), raw.count == 32
        else {
            throw ManifestSignature.KeyError(
                detail: "\"\(base64)\" is not an Ed25519 public key (base64 of 32 bytes)"
            )
        }
        rawRepresentation = raw
    }

    /// Trusts `key`.
    package init(_ key: Curve25519.Signing.PublicKey) {
        rawRepresentation = key.rawRepresentation
    }

    /// The key as apps pin it and manifests name it.
    public var base64: String { rawRepresentation.base64EncodedString() }
    public var description: String { base64 }

    /// Whether `signature` is this key's signature of `message`.
    package func verifies(_ signature: Data, for message: [UInt8]) -> Bool {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: rawRepresentation) else { return false }
        return key.isValidSignature(signature, for: message)
    }
}

/// One signature in a root manifest's `signatures` array: `{"key": "<package key>", "sig": "<base64>"}`.
///
/// What is signed is the manifest itself without its `signatures` member, written compactly
/// (keys in document order, numbers as written), after a fixed label. Re-serializing the parsed
/// document gives the same bytes on every machine, so the signature lives inside the manifest:
/// a device still makes one request, and can never pair a manifest with another's signature.
package struct ManifestSignature: Sendable, Hashable {
    /// The signer's package key, as ``TrustedKey/base64``. Only a key the app pins counts.
    package var key: String
    /// The Ed25519 signature (64 bytes; base64 in the document).
    package var signature: Data

    /// A signature by `key`.
    package init(key: String, signature: Data) {
        self.key = key
        self.signature = signature
    }

    /// The member of the root object that holds the signatures.
    package static let member = "signatures"

    /// Separates these messages from anything else a key might sign.
    static let label = Array("FreshAir signed manifest v1\n".utf8)

    /// The bytes a signature covers: the document without ``member``, compact, after a fixed label (`FreshAir signed manifest v1`).
    package static func message(for document: JSONValue) -> [UInt8] {
        message(for: document, streamedList: nil)
    }

    /// ``message(for:)`` of a document whose first member named `streamedList.key` was read
    /// as a stream (empty in `document`): its compact text, `streamedList.text`, stands in its
    /// place, so the message is the same bytes as for the whole tree.
    static func message(for document: JSONValue, streamedList: (key: String, text: [UInt8])?) -> [UInt8] {
        var unsigned = document
        unsigned.remove(member)
        guard let streamedList, case .object(let pairs) = unsigned, !pairs.isEmpty else {
            return label + unsigned.serializedBytes(indent: 0)
        }
        var writer = JSONWriter(indent: 0, capacity: label.count + streamedList.text.count + 4096)
        writer.output.append(contentsOf: label)
        writer.output.append(UInt8(ascii: "{"))
        var placed = false
        for (index, pair) in pairs.enumerated() {
            if index > 0 { writer.output.append(UInt8(ascii: ",")) }
            writer.quote(pair.key)
            writer.output.append(UInt8(ascii: ":"))
            if !placed, pair.key == streamedList.key {
                writer.output.append(contentsOf: streamedList.text)
                placed = true
            } else {
                writer.write(pair.value, level: 1)
            }
        }
        writer.output.append(UInt8(ascii: "}"))
        return writer.output
    }

    /// The signatures a document carries; malformed ones are errors, not silently skipped.
    static func all(in document: JSONValue, source: String) throws(ManifestError) -> [ManifestSignature] {
        guard let value = document[member] else { return [] }
        guard let items = value.array else {
            throw ManifestError(source: source, problem: .unexpectedShape("\"\(member)\" must be an array"))
        }
        var signatures: [ManifestSignature] = []
        for item in items {
            guard let key = item["key"]?.string, let text = item["sig"]?.string,
                let signature = Data(base64Encoded: text)
            else {
                throw ManifestError(
                    source: source,
                    problem: .unexpectedShape("each of \"\(member)\" needs \"key\" and \"sig\", both base64")
                )
            }
            signatures.append(ManifestSignature(key: key, signature: signature))
        }
        return signatures
    }

    /// The JSON written into a manifest.
    package var json: JSONValue { .object([("key", .string(key)), ("sig", .string(signature.base64EncodedString()))]) }

    /// A key that could not be read.
    package struct KeyError: Error, Sendable, Hashable, CustomStringConvertible {
        /// Why the key was refused.
        package var detail: String
        /// A key error saying `detail`.
        package init(detail: String) { self.detail = detail }
        package var description: String { detail }
    }
}

extension Manifest {
    /// Checks that this root manifest is signed by one of `trustedKeys` and that every entry
    /// has a digest, so that everything it leads to is covered by the signature.
    package func verify(_ keys: KeySet, source: String) throws(ManifestError) {
        try release.verify(keys, source: source)
        try requireDigests(source: source)
    }

    /// In a signed bundle every entry needs a digest: a file without one could be anything.
    func requireDigests(source: String) throws(ManifestError) {
        if let unhashed = entries.firstIndex(where: { $0.hash == nil }) {
            throw ManifestError(
                source: source,
                problem: .entry(
                    index: unhashed,
                    filename: entries[unhashed].path.string,
                    entries[unhashed].defect ?? .noDigestInSignedBundle
                )
            )
        }
    }

    /// In the object layout every entry a device selects is fetched by its SHA-256. Entries are
    /// named by their index in the document, `firstIndex` being that of ``entries``' first.
    func requireObjectDigests(_ selected: [ManifestEntry], source: String, firstIndex: Int = 0) throws(ManifestError) {
        guard let entry = selected.first(where: { $0.hash?.algorithm != .sha256 }) else { return }
        let index = firstIndex + (entries.firstIndex(of: entry) ?? 0)
        throw ManifestError(
            source: source,
            problem: .entry(index: index, filename: entry.path.string, entry.defect ?? .noSHA256InObjectLayout)
        )
    }
}
