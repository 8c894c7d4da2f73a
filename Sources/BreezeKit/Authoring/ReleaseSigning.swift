package import Foundation
package import FreshAir

/// How to sign a release.
package struct SigningOptions: Sendable {
    /// Add signatures to the release as it stands (another key of the same publisher):
    /// sequence, expiry and identity stay, and the signatures already there must still match.
    package var cosign = false
    /// How long devices accept the document before a fresh one must be published.
    package var validity: Duration = .seconds(30 * 86_400)
    /// What the document is signed for; `nil`: the bundle folder's, package file's or
    /// repository folder's name, which is what apps expect by default.
    package var identity: String?
    /// The sequence to sign; `nil`: the next one.
    package var sequence: Int?
    /// A bundle's layout to record in its root manifest before signing (see ``ContentLayout``);
    /// `nil`: keep what it records.
    package var layout: ContentLayout?
    /// A `.tar` package at least this large gets a chunk index beside it, named in its signed
    /// document (see ``PackageSignature/chunkIndex``); `nil`: none.
    package var chunkThreshold: Int64? = ChunkIndex.defaultThreshold

    package init(
        cosign: Bool = false,
        validity: Duration = .seconds(30 * 86_400),
        identity: String? = nil,
        sequence: Int? = nil,
        layout: ContentLayout? = nil,
        chunkThreshold: Int64? = ChunkIndex.defaultThreshold
    ) {
        self.cosign = cosign
        self.validity = validity
        self.identity = identity
        self.sequence = sequence
        self.layout = layout
        self.chunkThreshold = chunkThreshold
    }
}

/// What signing did.
package struct SigningReport: Sendable, Codable {
    /// The public keys that signed.
    package var keys: [String]
    /// Keys whose signatures were kept alongside (``SigningOptions/cosign``).
    package var kept: [String] = []
    /// Signatures dropped because they covered an earlier release.
    package var dropped = 0
    /// A bundle's root manifest moved from the array form to the object form.
    package var convertedToObjectForm = false
    /// The release as signed.
    package var identity: String?
    package var sequence: Int?
    package var expires: Date?
    /// The file written (the manifest, the `.sig` document, the index).
    package var file: String?
    /// A package's chunk index, when its document names one.
    package var chunkIndex: String?
}

/// The one way breeze signs a release, whatever the document (a bundle's root manifest, a
/// package's `.sig`, a repository's `index.json`): each signing is a new release to devices,
/// so the `sequence` moves on, `expires` is set and `identity` names what is signed (see
/// ``ReleaseFields``), and earlier signatures, which covered other content, are dropped. With
/// ``SigningOptions/cosign`` the release stays as it is and signatures are added.
enum ReleaseSigning {
    static func sign(
        _ document: inout JSONValue,
        existing: ReleaseFields,
        with keys: [SigningKey],
        options: SigningOptions,
        defaultIdentity: String
    ) throws -> SigningReport {
        guard !keys.isEmpty else { throw SigningError("no signing key given") }
        for key in keys {
            if let signer = existing.signatures.first(where: { key.isPublicKey($0.key) }) {
                throw SigningError(
                    "the signing key given is \(signer.key), the public key that signed this release, not its private key: give the key file `breeze keygen` wrote (its first line is \"\(SigningKey.fileHeader)\"); apps pin the public one"
                )
            }
        }
        var report = SigningReport(keys: keys.map(\.publicKey.base64))
        var signatures: [ManifestSignature] = []
        if options.cosign {
            guard let message = existing.signedMessage, !existing.signatures.isEmpty, existing.identity != nil,
                existing.sequence != nil,
                existing.expires != nil
            else {
                throw SigningError(
                    "--cosign adds a signature to a signed release; this one has none yet: sign it without --cosign first"
                )
            }
            for signature in existing.signatures where !report.keys.contains(signature.key) {
                guard let other = try? TrustedKey(base64: signature.key),
                    other.verifies(signature.signature, for: message)
                else {
                    throw SigningError(
                        "the content changed since \(signature.key) signed it: sign it again without --cosign (a new release)"
                    )
                }
                signatures.append(signature)
                report.kept.append(signature.key)
            }
        } else {
            let sequence =
                try options.sequence ?? ReleaseSequence.after(existing.sequence, in: "manifest.json", kind: .source)
            if let current = existing.sequence, sequence <= current {
                throw SigningError("sequence \(sequence) is not above the current \(current): devices would refuse it")
            }
            let seconds = (Date().timeIntervalSince1970 + Double(options.validity.components.seconds)).rounded(.down)
            document.set("identity", .string(options.identity ?? defaultIdentity), after: "format")
            document.set("sequence", JSONValue(sequence), after: "identity")
            document.set(
                "expires",
                .string(Date(timeIntervalSince1970: seconds).formatted(.iso8601)),
                after: "sequence"
            )
            report.dropped = existing.signatures.count
        }
        report.identity = document["identity"]?.string
        report.sequence = document["sequence"]?.integer.map(Int.init)
        report.expires = document["expires"]?.string.flatMap { ISO8601DateFormatter().date(from: $0) }
        let message = ManifestSignature.message(for: document)
        for key in keys { signatures.append(try key.sign(message)) }
        document.set(ManifestSignature.member, .array(signatures.map(\.json)))
        return report
    }
}

extension ReleaseFields {
    /// Whether every key of `keys` signed this release over the document as it is now, and it
    /// stays valid past `renewal` from `now`: publishing it again needs no new signature, and
    /// devices see no new release.
    package func isSignedAsIs(by keys: [TrustedKey], now: Date, renewal: TimeInterval) -> Bool {
        guard !keys.isEmpty, let message = signedMessage, let expires, identity != nil, sequence != nil,
            expires.timeIntervalSince(now) >= renewal
        else { return false }
        return keys.allSatisfy { key in
            signatures.contains { $0.key == key.base64 && key.verifies($0.signature, for: message) }
        }
    }
}
