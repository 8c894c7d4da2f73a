import BreezeKit
import Foundation
import FreshAir
import Testing

@testable import BreezeKit

/// Key compromise below a threshold, rotation and revocation, against nginx: the app pins
/// `keys/1.json` and follows `keys/<n>.json` as the publisher rotates.
@Suite("Key documents: thresholds, rotation and revocation")
struct KeyRotationTests {
    let a = SigningKey.generate(), b = SigningKey.generate(), c = SigningKey.generate(), d = SigningKey.generate()
    let attacker = SigningKey.generate()

    /// Signs as a publisher would, then gives the manifest a later time, as `breeze publish`
    /// does: nginx's ETag is the time to the second and the size, which a re-signing keeps.
    func sign(_ bundle: URL, with keys: [SigningKey], step: Int) async throws {
        _ = try await ManifestSigner.sign(bundle: bundle, with: keys)
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(Double(step))],
            ofItemAtPath: bundle.appendingPathComponent("manifest.json").path
        )
    }

    func problem(_ client: ExampleClient) async -> ManifestError.Problem? {
        do { try await client.sync.run() } catch {
            return (error as? FreshAirError)?.manifestError?.problem
        }
        return nil
    }

    @Test(
        "Below the threshold is refused; a rotation signed by too few old keys is refused; a revoked key no longer counts"
    )
    func rotation() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let keys = server.root.appendingPathComponent("keys")
            try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
            let first = try KeyDocumentWriter.write(
                members: [a, b, c].map(\.publicKey),
                threshold: 2,
                signers: [a, b],
                to: keys.appendingPathComponent("1.json")
            )
            let bundle = try ExampleBundle.write(in: server.root)
            _ = try await BundleHasher.run(bundle: bundle)

            var client = try ExampleClient(published: server)
            client.sync.configuration.keyRotation = KeyRotation(
                pinned: first,
                updates: server.url.appendingPathComponent("keys/")
            )
            // One stolen key is not enough.
            try await sign(bundle, with: [attacker, a], step: 1)
            #expect(await problem(client) == .belowThreshold(valid: 1, required: 2))
            #expect(try client.sync.store.liveRecord() == nil)
            try await sign(bundle, with: [a, b], step: 2)
            #expect(try await client.sync.run().outcome == .updated)

            // A forged rotation: the stolen key and the attacker's, threshold 1.
            var forged = JSONValue.object([
                ("format", JSONValue(1)), ("type", .string(KeyDocument.type)), ("version", JSONValue(2)),
                ("threshold", JSONValue(1)),
                ("keys", .array([.string(a.publicKey.base64), .string(attacker.publicKey.base64)])),
            ])
            let message = ManifestSignature.message(for: forged)
            forged.set("signatures", .array([try a.sign(message).json, try attacker.sign(message).json]))
            try PublishedText.write(
                String(decoding: forged.serializedBytes(indent: 2), as: UTF8.self),
                to: keys.appendingPathComponent("2.json")
            )
            try await sign(bundle, with: [attacker], step: 3)
            #expect(
                await problem(client) == .belowThreshold(valid: 1, required: 2),
                "the forged version 2 is refused first"
            )
            #expect(throws: SigningError.self, "breeze will not write what devices refuse") {
                _ = try KeyDocumentWriter.write(
                    members: [attacker.publicKey],
                    threshold: 1,
                    signers: [a, attacker],
                    previous: first,
                    to: server.root.appendingPathComponent("forged.json")
                )
            }

            // The genuine rotation: A is revoked, D joins; signed by A and B (the old threshold) and B and D (the new).
            try FileManager.default.removeItem(at: keys.appendingPathComponent("2.json"))
            _ = try KeyDocumentWriter.write(
                members: [b, c, d].map(\.publicKey),
                threshold: 2,
                signers: [a, b, d],
                previous: first,
                to: keys.appendingPathComponent("2.json")
            )
            try PublishedText.write("# rotated\n", to: bundle.appendingPathComponent("Embed1.freshair/bar.md"))
            _ = try await BundleHasher.run(bundle: bundle)
            try await sign(bundle, with: [c, d], step: 4)
            #expect(try await client.sync.run().outcome == .updated)
            #expect(client.live.appendingPathComponent("Embed1.freshair/bar.md").text == "# rotated\n")
            let stored = try KeyDocument(
                data: Data(contentsOf: client.sync.store.root.appendingPathComponent("keys.json")),
                source: "keys.json"
            )
            #expect(stored.version == 2)

            // The revoked key A, with B: only B counts now.
            try PublishedText.write(
                "# signed with a revoked key\n",
                to: bundle.appendingPathComponent("Embed1.freshair/bar.md")
            )
            _ = try await BundleHasher.run(bundle: bundle)
            try await sign(bundle, with: [a, b], step: 5)
            #expect(await problem(client) == .belowThreshold(valid: 1, required: 2))
            #expect(client.live.appendingPathComponent("Embed1.freshair/bar.md").text == "# rotated\n")
        }
    }

    @Test("breeze keys create and rotate, and sync --keys --key-updates, as a publisher and a device run them")
    func commandLine() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let work = try TemporaryFolder("cli-keys")
            for name in ["a", "b", "c"] {
                #expect(try await BreezeBinary.run(["keygen", work.path("\(name).key").path]).status == 0)
            }
            let keys = server.root.appendingPathComponent("keys")
            try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
            let created = try await BreezeBinary.run([
                "keys", "create", keys.appendingPathComponent("1.json").path, "--threshold", "2",
                "--key", work.path("a.key").path, "--key", work.path("b.key").path,
            ])
            #expect(
                created.status == 0 && created.output.contains("version 1, 2 of 2 keys must sign"),
                "\(created.output) \(created.error)"
            )
            let tooFew = try await BreezeBinary.run([
                "keys", "rotate", keys.appendingPathComponent("1.json").path,
                keys.appendingPathComponent("2.json").path,
                "--member", work.path("c.key").path, "--key", work.path("a.key").path, "--key", work.path("c.key").path,
            ])
            // Said in the command's terms: which version's keys, and how many more --key.
            #expect(
                tooFew.status == 65
                    && tooFew.error.contains(
                        "must be signed by 2 of the 2 keys version 1 lists; of the --key keys, only 1"
                    )
                    && tooFew.error.contains("add --key with 1 more of them"),
                "\(tooFew.error)"
            )
            let impossible = try await BreezeBinary.run([
                "keys", "create", work.path("x.json").path, "--threshold", "2", "--key", work.path("a.key").path,
            ])
            #expect(impossible.status == 65 && impossible.error.contains("add --member keys"), "\(impossible.error)")
            #expect(!FileManager.default.fileExists(atPath: work.path("x.json").path))
            let rotated = try await BreezeBinary.run([
                "keys", "rotate", keys.appendingPathComponent("1.json").path,
                keys.appendingPathComponent("2.json").path,
                "--member", work.path("c.key").path,
                "--key", work.path("a.key").path, "--key", work.path("b.key").path, "--key", work.path("c.key").path,
            ])
            #expect(rotated.status == 0, "\(rotated.error)")

            let bundle = try ExampleBundle.write(in: server.root)
            #expect(try await BreezeBinary.run(["hash", bundle.path]).status == 0)
            #expect(try await BreezeBinary.run(["sign", bundle.path, "--key", work.path("c.key").path]).status == 0)
            let url = server.url.appendingPathComponent(ExampleBundle.name + "/").absoluteString
            let synced = try await BreezeBinary.run([
                "sync", url, work.path("live").path, "--keys", keys.appendingPathComponent("1.json").path,
                "--key-updates", server.url.appendingPathComponent("keys/").absoluteString, "--env", "appVersion=0.9",
            ])
            #expect(synced.status == 0, "version 2 (c alone) is followed: \(synced.error)")
            let pinnedOnly = try await BreezeBinary.run([
                "sync", url, work.path("other").path, "--keys", keys.appendingPathComponent("1.json").path,
            ])
            #expect(
                pinnedOnly.status == 65 && pinnedOnly.error.contains("none of which this app trusts"),
                "\(pinnedOnly.error)"
            )
        }
    }
    @Test("A key document over 256 KiB is refused as too large; the pinned keys still decide")
    func oversizedKeyDocument() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let keys = server.root.appendingPathComponent("keys")
            try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
            let first = try KeyDocumentWriter.write(
                members: [a.publicKey],
                threshold: 1,
                signers: [a],
                to: keys.appendingPathComponent("1.json")
            )
            let huge =
                "{\"keys\": [" + Array(repeating: "\"\(a.publicKey.base64)\"", count: 8_000).joined(separator: ",")
                + "]}"
            try PublishedText.write(huge, to: keys.appendingPathComponent("2.json"))
            let bundle = try ExampleBundle.write(in: server.root)
            _ = try await BundleHasher.run(bundle: bundle)
            try await sign(bundle, with: [a], step: 1)
            var client = try ExampleClient(published: server)
            client.sync.configuration.keyRotation = KeyRotation(
                pinned: first,
                updates: server.url.appendingPathComponent("keys/")
            )
            do {
                try await client.sync.run()
                Issue.record("a 360 KB key document was read")
            } catch let error as FreshAirError {
                #expect(error.code == .bodyTooLarge && error.sizeLimit == 256 << 10, "\(error)")
                #expect(error.localizedDescription.contains("keys/2.json"))
            }
            #expect(try client.sync.store.liveRecord() == nil)
        }
    }

}
