import Crypto
import Foundation
import Testing

@testable import FreshAir

@Suite("Signed root manifests: Ed25519 over the manifest's own content")
struct ManifestSignatureTests {
    let key = Curve25519.Signing.PrivateKey()
    let digest = String(repeating: "ab", count: 32)

    /// A manifest as text, signed by `signer` over exactly what `body` says.
    func signed(_ body: String, by signer: Curve25519.Signing.PrivateKey) throws -> String {
        let document = try JSONReader.parse(Array(body.utf8))
        let signature = try signer.signature(for: ManifestSignature.message(for: document))
        var withSignature = document
        withSignature.set(
            "signatures",
            .array([ManifestSignature(key: TrustedKey(signer.publicKey).base64, signature: signature).json])
        )
        return withSignature.serialized()
    }

    func verify(_ text: String, trusting keys: [TrustedKey]) throws(ManifestError) {
        let manifest = try Manifest(data: Data(text.utf8), source: "m.json")
        try manifest.verify(KeySet(keys: keys), source: "m.json")
    }

    func problem(_ text: String, trusting keys: [TrustedKey]) -> ManifestError.Problem? {
        do { try verify(text, trusting: keys) } catch { return error.problem }
        return nil
    }

    @Test("A signature survives reformatting, but not a changed value")
    func signatureCoversContentNotLayout() throws {
        let body =
            #"{"format": 2, "sequence": 3, "build": 1.50, "files": [{"filename": "a.md", "sha": "\#(digest)", "size": 1}]}"#
        let text = try signed(body, by: key)
        let trusted = [TrustedKey(key.publicKey)]
        try verify(text, trusting: trusted)
        // Indentation and line breaks are not content.
        let compact = try JSONReader.parse(Array(text.utf8)).serialized(indent: 0)
        try verify(compact, trusting: trusted)
        // A changed sequence, digest or number spelling is.
        #expect(
            problem(text.replacingOccurrences(of: "\"sequence\": 3", with: "\"sequence\": 4"), trusting: trusted)
                == .signatureInvalid
        )
        #expect(
            problem(text.replacingOccurrences(of: digest, with: String(repeating: "cd", count: 32)), trusting: trusted)
                == .signatureInvalid
        )
        #expect(problem(text.replacingOccurrences(of: "1.50", with: "1.5"), trusting: trusted) == .signatureInvalid)
    }

    @Test("Unsigned, foreign-signed and unhashed manifests are refused when keys are pinned")
    func refusals() throws {
        let trusted = [TrustedKey(key.publicKey)]
        let body = #"{"format": 2, "files": [{"filename": "a.md", "sha": "\#(digest)"}]}"#
        #expect(problem(body, trusting: trusted) == .unsigned)
        #expect(problem(#"[{"filename": "a.md", "sha": "\#(digest)"}]"#, trusting: trusted) == .unsigned)
        let stranger = Curve25519.Signing.PrivateKey()
        #expect(
            problem(try signed(body, by: stranger), trusting: trusted)
                == .untrustedSigner([TrustedKey(stranger.publicKey).base64])
        )
        // Either of two pinned keys will do (a key rotation).
        try verify(try signed(body, by: stranger), trusting: trusted + [TrustedKey(stranger.publicKey)])
        // A file without a digest could be anything: the signature would not cover it.
        let unhashed = try signed(#"{"format": 2, "files": [{"filename": "a.md"}]}"#, by: key)
        guard case .entry(0, "a.md", .noDigestInSignedBundle)? = problem(unhashed, trusting: trusted) else {
            Issue.record("an entry without a digest was accepted")
            return
        }
    }

    @Test("Keys and signature lists that are not what they claim are clear errors")
    func malformed() throws {
        #expect(throws: ManifestSignature.KeyError.self) { try TrustedKey(base64: "not a key") }
        #expect(throws: ManifestSignature.KeyError.self) {
            try TrustedKey(base64: Data(count: 31).base64EncodedString())
        }
        #expect(throws: ManifestError.self) {
            try Manifest(data: Data(#"{"files": [], "signatures": {"key": "x"}}"#.utf8), source: "m.json")
        }
        #expect(throws: ManifestError.self) {
            try Manifest(
                data: Data(#"{"files": [], "signatures": [{"key": "x", "sig": "%%%"}]}"#.utf8),
                source: "m.json"
            )
        }
    }
}

@Suite("A package's signed document")
struct PackageSignatureTests {
    let digest = String(repeating: "ab", count: 32)

    @Test("The chunk index it names round-trips and is covered; a malformed one is a clear error, not ignored")
    func chunkIndexMember() throws {
        let index = PackageSignature.SignedFile(
            sha256: ContentHash(hex: String(repeating: "cd", count: 32))!,
            size: 35_794
        )
        let document = PackageSignature(
            sha256: ContentHash(hex: digest)!,
            size: 1 << 30,
            chunkIndex: index,
            release: ReleaseFields()
        )
        let data = Data(document.unsignedJSON.serializedBytes())
        #expect(try PackageSignature(data: data, source: "x.sig").chunkIndex == index)
        var other = document
        other.chunkIndex?.size += 1
        #expect(
            ManifestSignature.message(for: document.unsignedJSON) != ManifestSignature.message(for: other.unsignedJSON),
            "what a signature covers includes the index"
        )
        #expect(
            try PackageSignature(data: Data(#"{"sha256": "\#(digest)", "size": 5}"#.utf8), source: "x").chunkIndex
                == nil
        )
        for chunks in [
            #""chunks": {"size": 5}"#, #""chunks": {"sha256": "ab", "size": 5}"#, #""chunks": "x""#,
            #""chunks": {"sha256": "\#(digest)", "size": -1}"#,
        ] {
            #expect(throws: ManifestError.self) {
                try PackageSignature(data: Data(#"{"sha256": "\#(digest)", "size": 5, \#(chunks)}"#.utf8), source: "x")
            }
        }
    }
}
