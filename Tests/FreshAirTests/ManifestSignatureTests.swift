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

    @Test(
        "The entry list is read as a stream, yet a signature covers the same bytes as over the whole tree, wherever the list stands"
    )
    func streamedListIsSigned() throws {
        let entries = (0..<300).map { #"{"filename": "f\#($0).txt", "sha": "\#(digest)", "size": \#($0)}"# }
        let body =
            #"{"identity": "x", "files": [\#(entries.joined(separator: ", "))], "sequence": 9, "notes": {"files": [1]}}"#
        let text = try signed(body, by: key)
        let trusted = [TrustedKey(key.publicKey)]
        try verify(text, trusting: trusted)
        let manifest = try Manifest(data: Data(text.utf8), source: "m.json")
        #expect(manifest.entries.count == 300)
        #expect(manifest.signedMessage == ManifestSignature.message(for: try JSONReader.parse(Array(text.utf8))))
        // Signed with the list last, carried with the signatures first: still the same message.
        let listLast = try JSONReader.parse(
            Array(#"{"identity": "x", "sequence": 9, "files": [\#(entries.joined(separator: ", "))]}"#.utf8)
        )
        let signature = try key.signature(for: ManifestSignature.message(for: listLast))
        guard case .object(let pairs) = listLast else { throw ManifestError(source: "", problem: .unsigned) }
        let signaturesFirst = JSONValue.object(
            [
                (
                    "signatures",
                    .array([ManifestSignature(key: TrustedKey(key.publicKey).base64, signature: signature).json])
                )
            ]
                + pairs
        )
        try verify(signaturesFirst.serialized(), trusting: trusted)
        // Member order is content: the list moved to the front is another document.
        let moved = JSONValue.object([pairs[2], pairs[0], pairs[1]] + [signaturesFirst.pairs![0]]).serialized()
        #expect(problem(moved, trusting: trusted) == .signatureInvalid)
        // The signatures under a key spelled with an escape, which a search of the bytes for
        // `signatures` misses: read again whole, and checked all the same.
        let escaped = text.replacingOccurrences(of: #""signatures""#, with: #""\u0073ignatures""#)
        #expect(!escaped.contains("signatures"))
        try verify(escaped, trusting: trusted)
        #expect(
            problem(escaped.replacingOccurrences(of: #""size": 150"#, with: #""size": 151"#), trusting: trusted)
                == .signatureInvalid
        )
        // Unsigned: no message, and nothing is kept for one.
        #expect(try Manifest(data: Data(body.utf8), source: "m.json").signedMessage == nil)
        // An entry changed in the middle of the list breaks it.
        let changed = text.replacingOccurrences(of: #""size": 150"#, with: #""size": 151"#)
        #expect(changed != text)
        #expect(problem(changed, trusting: trusted) == .signatureInvalid)
    }

    @Test("Two \"files\" members are refused: which one counts is a question two readers could answer differently")
    func twoFileLists() {
        let text =
            #"{"files": [{"filename": "a", "sha": "\#(digest)"}], "files": [{"filename": "b", "sha": "\#(digest)"}]}"#
        #expect(throws: ManifestError.self) { try Manifest(data: Data(text.utf8), source: "m.json") }
        do { _ = try Manifest(data: Data(text.utf8), source: "m.json") } catch {
            #expect("\(error)".contains("more than one \"files\" member"))
        }
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
        // The signer's private key pinned in place of its public key (the secret line of its key
        // file): said so, since the app then ships the secret.
        let pinnedSecret = try TrustedKey(base64: stranger.rawRepresentation.base64EncodedString())
        let shipped = problem(try signed(body, by: stranger), trusting: [pinnedSecret])
        #expect(shipped == .pinnedPrivateKey(publicKey: TrustedKey(stranger.publicKey).base64))
        #expect(
            ManifestError(source: "m.json", problem: shipped!).detail.contains(
                "whose private key this app pins in place of the public one"
            )
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

    @Test(
        "Where a signature is required, a document that names none is refused before it is parsed; one whose member is spelled with escapes is still read"
    )
    func unsignedRefusedUnparsed() throws {
        func required(_ text: String) -> ManifestError.Problem? {
            do {
                _ = try Manifest(data: Data(text.utf8), source: "m.json", maxEntries: .max, requireSignature: true)
            } catch { return error.problem }
            return nil
        }
        // Broken JSON after the start: refused as unsigned, so it was never parsed.
        #expect(required(#"{"files": [{"filename": "a.md", "sha": "#) == .unsigned)
        guard case .invalidJSON? = required(#"{"signatures": [], "files": [{"#) else {
            Issue.record("a document naming signatures was not parsed")
            return
        }
        // `\u0073ignatures` is `signatures` to a JSON reader: the signature counts.
        let body = #"{"format": 2, "sequence": 1, "files": [{"filename": "a.md", "sha": "\#(digest)"}]}"#
        let escaped = try signed(body, by: key).replacingOccurrences(of: "\"signatures\"", with: #""\u0073ignatures""#)
        #expect(!escaped.contains("signatures"))
        #expect(required(escaped) == nil)
        try verify(escaped, trusting: [TrustedKey(key.publicKey)])
        #expect(RepositoryIndex.mayBeSigned(Data(escaped.utf8)))
        #expect(!RepositoryIndex.mayBeSigned(Data(body.utf8)))
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
