package import Foundation

/// The keys a device trusts, and how many of them must sign.
package struct KeySet: Sendable, Hashable {
    /// The keys whose signatures count.
    package var keys: [TrustedKey]
    /// How many distinct keys of ``keys`` must have signed a document.
    package var threshold: Int

    /// `keys`, of which `threshold` must sign.
    package init(keys: [TrustedKey], threshold: Int = 1) {
        self.keys = keys
        self.threshold = threshold
    }
}

/// A signed list of signing keys with a threshold, the way a publisher rotates and revokes
/// keys (TUF's root role): `keys/<version>.json`, written by `breeze keys create` and
/// `breeze keys rotate`.
///
/// ```json
/// {"format": 1, "type": "freshair-keys", "version": 2, "threshold": 2,
///  "keys": ["Vx4R…=", "k9Qa…=", "P0bc…="], "signatures": [{"key": "…", "sig": "…"}, …]}
/// ```
///
/// An app pins one version (``KeyRotation/pinned``). A newer version counts only when it is
/// exactly one version on and signed by the threshold of the version before it *and* by its
/// own threshold, so a key can be added, replaced or revoked only by the keys already trusted,
/// and a thief of fewer keys than the threshold can do neither.
package struct KeyDocument: Sendable, Hashable {
    /// The document's number: `keys/<version>.json`.
    package var version: Int
    /// The keys it trusts, and how many must sign.
    package var keySet: KeySet
    /// Signatures over the document.
    package var signatures: [ManifestSignature]
    /// What ``signatures`` cover.
    package var signedMessage: [UInt8]?

    /// The value of `"type"`, which keeps a key document from being read as anything else.
    package static let type = "freshair-keys"

    /// Reads a key document, naming `source` in errors.
    package init(data: Data, source: String) throws(ManifestError) {
        func shape(_ detail: String) -> ManifestError {
            ManifestError(source: source, problem: .unexpectedShape(detail))
        }
        let document: JSONValue
        do { document = try JSONReader.parse(data) } catch {
            throw ManifestError(source: source, problem: .invalidJSON(error))
        }
        guard document["type"]?.string == Self.type else {
            throw shape("not a key document (\"type\": \"\(Self.type)\")")
        }
        guard let version = document["version"]?.integer, version >= 1, let threshold = document["threshold"]?.integer,
            let texts = document["keys"]?.array?.compactMap(\.string)
        else { throw shape("expected \"version\" and \"threshold\" (whole numbers) and \"keys\" (package keys)") }
        var keys: [TrustedKey] = []
        for text in texts {
            do { keys.append(try TrustedKey(parsing: text)) } catch { throw shape(error.detail) }
        }
        guard Set(keys).count == keys.count, threshold >= 1, threshold <= keys.count else {
            throw shape("the threshold must be between 1 and the number of distinct keys (\(keys.count))")
        }
        self.version = Int(version)
        keySet = KeySet(keys: keys, threshold: Int(threshold))
        let release = try ReleaseFields(document: document, source: source)
        signatures = release.signatures
        signedMessage = release.signedMessage
    }

    /// Checks that this document is signed by its own threshold: a version that its own keys
    /// do not vouch for is not a key set anyone controls.
    package func verifySelf(source: String) throws(ManifestError) {
        try ReleaseFields.verify(signatures, message: signedMessage, against: keySet, source: source)
    }

    /// Checks that `next` may replace this version: one version on, signed by this version's
    /// threshold and by its own.
    package func verifySuccessor(_ next: KeyDocument, source: String) throws(ManifestError) {
        guard next.version == version + 1 else {
            throw ManifestError(
                source: source,
                problem: .unexpectedShape("key document version \(next.version) does not follow \(version)")
            )
        }
        try ReleaseFields.verify(next.signatures, message: next.signedMessage, against: keySet, source: source)
        try next.verifySelf(source: source)
    }
}
