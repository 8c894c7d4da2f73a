import Crypto
package import Foundation

/// What makes a document a signed release, in all three delivery modes: a bundle's root
/// manifest, a package's `.sig` document and a repository's `index.json` each carry these
/// top-level members, written by `breeze sign`:
///
/// - `identity`: what the document is for (the bundle folder's name, the package's file name,
///   the repository id), so that a signature on one cannot install another;
/// - `sequence`: the release number, which devices never let go down;
/// - `expires`: an ISO 8601 date after which devices refuse the document;
/// - `signatures`: Ed25519 signatures (see `ManifestSignature`) over the document without
///   this member.
package struct ReleaseFields: Sendable, Hashable {
    /// What the document is for (the bundle folder's, package's or repository's name).
    package var identity: String?
    /// The release number; each signing moves it on.
    package var sequence: Int?
    /// When the release stops being acceptable.
    package var expires: Date?
    /// Signatures over the document.
    package var signatures: [ManifestSignature] = []
    /// What ``signatures`` cover; set when the document has a `signatures` member.
    package var signedMessage: [UInt8]?

    /// Release fields; all empty by default.
    package init(identity: String? = nil, sequence: Int? = nil, expires: Date? = nil) {
        self.identity = identity
        self.sequence = sequence
        self.expires = expires
    }

    /// Reads the members from a document's top-level object.
    /// - Parameter streamedList: the compact text of a member the reader streamed instead of
    ///   keeping (empty in `document`), and its key: what a signature covers in its place.
    package init(
        document: JSONValue,
        source: String,
        streamedList: (key: String, text: [UInt8])? = nil
    ) throws(ManifestError) {
        identity = document["identity"]?.string
        sequence = document["sequence"]?.integer.map(Int.init)
        if let expiry = document["expires"]?.string {
            guard let date = ISO8601Timestamp.parseUTCSeconds(expiry) ?? ISO8601DateFormatter().date(from: expiry)
            else {
                throw ManifestError(
                    source: source,
                    problem: .unexpectedShape("\"expires\" is not an ISO 8601 date: \(expiry)")
                )
            }
            expires = date
        }
        signatures = try ManifestSignature.all(in: document, source: source)
        if document[ManifestSignature.member] != nil {
            signedMessage = ManifestSignature.message(for: document, streamedList: streamedList)
        }
    }

    /// Checks the document is signed by at least `keys.threshold` distinct keys of `keys`.
    ///
    /// - Throws: `ManifestError` with `ManifestError/Problem/unsigned`,
    ///   `ManifestError/Problem/untrustedSigner(_:)`, `ManifestError/Problem/signatureInvalid`
    ///   or `ManifestError/Problem/belowThreshold(valid:required:)`.
    package func verify(_ keys: KeySet, source: String) throws(ManifestError) {
        try Self.verify(signatures, message: signedMessage, against: keys, source: source)
    }

    static func verify(
        _ signatures: [ManifestSignature],
        message: [UInt8]?,
        against keys: KeySet,
        source: String
    ) throws(ManifestError) {
        guard let message, !signatures.isEmpty else {
            throw ManifestError(source: source, problem: .unsigned)
        }
        let tally = Tally(signatures, message: message, against: keys)
        guard tally.checked > 0 else {
            // Named as far as a reader can use: a few distinct keys, not every entry sent.
            var named: [String] = []
            for key in signatures.map(\.key) where !named.contains(key) && named.count < 4 { named.append(key) }
            if let signer = pinnedPrivateKey(keys, signedAs: named) {
                throw ManifestError(source: source, problem: .pinnedPrivateKey(publicKey: signer))
            }
            throw ManifestError(source: source, problem: .untrustedSigner(named))
        }
        guard tally.valid > 0 else { throw ManifestError(source: source, problem: .signatureInvalid) }
        guard tally.valid >= keys.threshold else {
            throw ManifestError(source: source, problem: .belowThreshold(valid: tally.valid, required: keys.threshold))
        }
    }

    /// The signer whose private key is pinned in place of its public key (the secret line of a
    /// `breeze keygen` file, not the public one it prints): an app that ships it lets anyone
    /// who reads the app sign content. Read only once no pinned key signed: a key derived per
    /// pinned key.
    static func pinnedPrivateKey(_ keys: KeySet, signedAs signers: [String]) -> String? {
        for key in keys.keys {
            guard let secret = try? Curve25519.Signing.PrivateKey(rawRepresentation: key.rawRepresentation) else {
                continue
            }
            let derived = secret.publicKey.rawRepresentation.base64EncodedString()
            if signers.contains(derived) { return derived }
        }
        return nil
    }

    /// The signatures of trusted keys that verify. Each trusted key's first signature only, and
    /// no more checks once the threshold is met: the work is one verification per distinct
    /// trusted key, however many entries a hostile document lists (100,000 bogus entries for one
    /// key cost 35 s when each was checked).
    struct Tally {
        /// Signatures checked: at most one per distinct trusted key.
        var checked = 0
        /// Distinct trusted keys whose signature verifies.
        var valid = 0

        init(_ signatures: [ManifestSignature], message: [UInt8], against keys: KeySet) {
            let trusted = Dictionary(keys.keys.map { ($0.base64, $0) }, uniquingKeysWith: { first, _ in first })
            var tried = Set<String>()
            for signature in signatures where valid < keys.threshold {
                guard let key = trusted[signature.key], tried.insert(signature.key).inserted else { continue }
                checked += 1
                if key.verifies(signature.signature, for: message) { valid += 1 }
            }
        }
    }

}
