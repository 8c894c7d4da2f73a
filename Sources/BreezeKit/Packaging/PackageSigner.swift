import Foundation
import FreshAir

/// `breeze sign PACKAGE`: writes the package's signed document, `<package>.sig` beside it
/// (see ``PackageSignature``): its SHA-256 and size, and the release fields. Devices that pin
/// the key fetch it first and check the package against it while it downloads.
package enum PackageSigner {
    /// Signs `package` with every key in `keys` and writes `<package>.sig`.
    package static func sign(
        package: URL,
        with keys: [SigningKey],
        options: SigningOptions = SigningOptions()
    ) throws -> SigningReport {
        let signatureURL = URL(fileURLWithPath: package.path + PackageSignature.suffix)
        let (digest, size) = try ContentHash.ofFile(at: package, using: .sha256)
        let previousTime = ServedFileTime.modified(signatureURL)
        var existing: PackageSignature?
        var document: JSONValue
        let existingData = try? Data(contentsOf: signatureURL)
        if let data = existingData {
            do { existing = try PackageSignature(data: data, source: signatureURL.path) } catch {
                throw SigningError(
                    "\(signatureURL.path) is not a package signature breeze can read (\(error)); move it away to sign afresh"
                )
            }
        }
        if options.cosign {
            guard let existing, existing.sha256 == digest, existing.size == size, let data = existingData else {
                throw SigningError(
                    "--cosign adds a signature to the package as signed, but \(package.lastPathComponent) changed since (or was never signed): sign it without --cosign"
                )
            }
            document = try JSONReader.parse(data)
        } else {
            document = PackageSignature(sha256: digest, size: size, release: ReleaseFields()).unsignedJSON
        }
        var report = try ReleaseSigning.sign(
            &document,
            existing: existing?.release ?? ReleaseFields(),
            with: keys,
            options: options,
            defaultIdentity: package.lastPathComponent
        )
        try Data(document.serializedBytes(indent: 2) + [UInt8(ascii: "\n")]).write(to: signatureURL, options: .atomic)
        try ServedFileTime.moveForward(signatureURL, past: previousTime)
        report.file = signatureURL.path
        return report
    }
}
