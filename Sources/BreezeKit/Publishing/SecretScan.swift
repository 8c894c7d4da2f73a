import Crypto
import Foundation
import FreshAir

/// Finds a signing key among the files about to be published, in any form `breeze keygen`
/// writes it: the key file (its first line says so), or only its secret line pasted into a
/// file. A secret line is told apart from any other 32 bytes of base64 (a public key, a
/// digest) by what it signs: its public key is one that signed the document being published.
enum SecretScan {
    /// Files larger than this are not read: a key file is three short lines.
    static let largestKeyFile: Int64 = 4096

    /// Refuses `files` when one holds a signing key: a key file, or the secret of a key that
    /// signed `document` (the root as it goes up, at `path`).
    ///
    /// - Throws: ``PublishError`` naming the file.
    static func refuse(_ files: [LocalFile], signedAs document: Data?, path: String) throws {
        let signers = Set(document.flatMap { SignerContinuity.signers(of: path, in: $0) } ?? [])
        // With no signer to compare with, only a key file's first line can tell: read no more.
        let wanted = signers.isEmpty ? SigningKey.fileHeader.utf8.count : Int(largestKeyFile)
        for file in files where file.size <= largestKeyFile {
            guard let handle = try? FileHandle(forReadingFrom: file.url) else { continue }
            let data = (try? handle.read(upToCount: wanted)) ?? Data()
            try? handle.close()
            if data.starts(with: Data(SigningKey.fileHeader.utf8)) {
                throw PublishError(
                    "\(file.path) is a signing key: it must never be published. Keep it outside the bundle"
                )
            }
            guard !signers.isEmpty, let signer = secret(in: data, of: signers) else { continue }
            throw PublishError(
                "\(file.path) holds the secret of the signing key \(signer), which signed this release: it must "
                    + "never be published. Remove it from the bundle (and, since it was in a folder meant for "
                    + "devices, consider the key exposed: `breeze keygen` a new one)"
            )
        }
    }

    /// The public key (base64) among `signers` whose secret seed is a line of `data`, if any.
    static func secret(in data: Data, of signers: Set<String>) -> String? {
        let text = String(decoding: data, as: UTF8.self)
        for line in text.split(whereSeparator: { $0.isNewline || $0 == " " || $0 == "\"" || $0 == "'" }) {
            guard line.count == 44, let seed = Data(base64Encoded: String(line)), seed.count == 32,
                let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed)
            else { continue }
            let publicKey = key.publicKey.rawRepresentation.base64EncodedString()
            if signers.contains(publicKey) { return publicKey }
        }
        return nil
    }
}
