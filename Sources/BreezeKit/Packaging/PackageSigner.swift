package import Foundation
package import FreshAir

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
        let (digest, size) = try FileDigests.digest(of: package, using: .sha256)
        let previousTime = ServedFileTime.modified(signatureURL)
        var existing: PackageSignature?
        var document: JSONValue
        var chunkIndex: PackageSignature.SignedFile?
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
            chunkIndex = existing.chunkIndex
        } else {
            chunkIndex = try refreshChunkIndex(
                of: package,
                digest: digest,
                size: size,
                threshold: options.chunkThreshold
            )
            document =
                PackageSignature(sha256: digest, size: size, chunkIndex: chunkIndex, release: ReleaseFields())
                .unsignedJSON
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
        if chunkIndex != nil { report.chunkIndex = package.path + ChunkIndex.suffix }
        return report
    }

    /// Whether `package`'s `.sig` already names it as it is (digest, size, and the chunk index
    /// signing would give it), signed by every key of `keys` and valid past `renewal`: a
    /// release of it then keeps the document instead of making a new release of the same bytes.
    package static func isSignedAsIs(
        package: URL,
        by keys: [TrustedKey],
        options: SigningOptions,
        now: Date,
        renewal: TimeInterval
    ) -> Bool {
        let signatureURL = URL(fileURLWithPath: package.path + PackageSignature.suffix)
        guard let data = try? Data(contentsOf: signatureURL),
            let document = try? PackageSignature(data: data, source: signatureURL.path),
            document.release.isSignedAsIs(by: keys, now: now, renewal: renewal),
            let (digest, size) = try? FileDigests.digest(of: package, using: .sha256),
            digest == document.sha256, size == document.size
        else { return false }
        let indexed =
            ArchiveFormat(fileName: package.lastPathComponent) == .tar
            && options.chunkThreshold.map { size >= $0 } == true
        guard let chunkIndex = document.chunkIndex else { return !indexed }
        let indexURL = URL(fileURLWithPath: package.path + ChunkIndex.suffix)
        guard indexed, let (indexDigest, indexSize) = try? FileDigests.digest(of: indexURL, using: .sha256) else {
            return false
        }
        return indexDigest == chunkIndex.sha256 && indexSize == chunkIndex.size
    }

    /// A `.tar` package of at least `threshold` bytes gets `<package>.freshair-chunks` beside
    /// it (made anew unless it already describes the package), and its document names it. A
    /// compressed package cannot: a change anywhere changes every byte after it. An index left
    /// from an earlier package that no longer qualifies is removed.
    private static func refreshChunkIndex(
        of package: URL,
        digest: ContentHash,
        size: Int64,
        threshold: Int64?
    ) throws -> PackageSignature.SignedFile? {
        let indexURL = URL(fileURLWithPath: package.path + ChunkIndex.suffix)
        guard ArchiveFormat(fileName: package.lastPathComponent) == .tar, let threshold, size >= threshold else {
            if ChunkIndexing.describes(indexURL, hash: nil, size: nil) {
                try FileManager.default.removeItem(at: indexURL)
            }
            return nil
        }
        if !ChunkIndexing.describes(indexURL, hash: digest, size: size) {
            let previousTime = ServedFileTime.modified(indexURL)
            try ChunkIndex.make(fileAt: package.path).serialized().write(to: indexURL, options: .atomic)
            try ServedFileTime.moveForward(indexURL, past: previousTime)
        }
        let (indexDigest, indexSize) = try FileDigests.digest(of: indexURL, using: .sha256)
        return PackageSignature.SignedFile(sha256: indexDigest, size: indexSize)
    }
}
