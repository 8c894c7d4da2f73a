import BreezeKit
import Foundation
import FreshAir
import Testing

@Suite("Signed bundles, from breeze keygen and sign to a device that pins the key")
struct SigningTests {
    @Test("Only a bundle signed by a pinned key installs; tampering is refused and the live version stays")
    func pinnedKeyGuardsTheBundle() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = try ExampleBundle.write(in: server.root)
            _ = try await BundleHasher.run(bundle: bundle)  // digests and sizes current: signing requires it
            let keys = try TemporaryFolder("keys")
            let trusted = SigningKey.generate(), stranger = SigningKey.generate()
            try trusted.write(to: keys.path("trusted.key"))
            #expect(throws: SigningError.self) { try trusted.write(to: keys.path("trusted.key")) }  // never overwritten
            #expect(try SigningKey(contentsOf: keys.path("trusted.key")).publicKey == trusted.publicKey)

            var client = try ExampleClient(published: server)
            client.sync.configuration.trustedKeys = [trusted.publicKey]
            func refusal() async -> ManifestError.Problem? {
                do { try await client.sync.run() } catch { return (error as? FreshAirError).flatMap { if case .manifest(let m) = $0 { m.problem } else { nil } } }
                return nil
            }

            // Unsigned, then signed by a key the app does not pin: nothing is installed.
            #expect(await refusal() == .unsigned)
            _ = try await ManifestSigner.sign(bundle: bundle, with: stranger)
            #expect(await refusal() == .untrustedSigner([stranger.publicKey.base64]))
            #expect(try client.sync.store.liveRecord() == nil)

            // Signed by the pinned key too: it installs (the stranger's signature is kept beside it).
            let report = try await ManifestSigner.sign(bundle: bundle, with: trusted)
            #expect(report.kept == [stranger.publicKey.base64] && !report.convertedToObjectForm)
            #expect(try await client.sync.run().outcome == .updated)
            let installed = client.liveFiles()

            // Someone edits the published manifest without the key: refused, the live version stays.
            let rootURL = bundle.appendingPathComponent("manifest.json")
            let original = try String(contentsOf: rootURL, encoding: .utf8)
            try PublishedText.write(original.replacingOccurrences(of: "\"sequence\": 1", with: "\"sequence\": 9"), to: rootURL)
            #expect(await refusal() == .signatureInvalid)
            #expect(client.liveFiles() == installed)

            // The publisher's way: change, hash (which drops the stale signatures), sign, publish.
            try PublishedText.write(original, to: rootURL)
            try PublishedText.write("# Bar, signed\n", to: bundle.appendingPathComponent("Embed1.freshair/bar.md"))
            let hashed = try await BundleHasher.run(bundle: bundle)
            #expect(hashed.signaturesRemoved == 2 && hashed.sequence == 2)
            #expect(await refusal() == .unsigned)
            _ = try await ManifestSigner.sign(bundle: bundle, with: trusted)
            #expect(try await client.sync.run().outcome == .updated)
            #expect(client.live.appendingPathComponent("Embed1.freshair/bar.md").text == "# Bar, signed\n")
        }
    }

    @Test("breeze keygen, sign, validate and sync --trusted-key, as a publisher and a device run them")
    func commandLine() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = try ExampleBundle.write(in: server.root)
            let work = try TemporaryFolder("cli-signing")
            let keygen = try await BreezeBinary.run(["keygen", work.path("app.key").path])
            #expect(keygen.status == 0)
            let publicKey = try #require(keygen.output.split(separator: "\n").last.map(String.init))
            #expect(try TrustedKey(base64: publicKey).base64 == publicKey)

            // Signing stale content would ship a bundle every device refuses: sign says so.
            try PublishedText.write("# changed\n", to: bundle.appendingPathComponent("Embed1.freshair/bar.md"))
            let stale = try await BreezeBinary.run(["sign", bundle.path, "--key", work.path("app.key").path])
            #expect(stale.status != 0 && stale.error.contains("breeze hash"))
            #expect(try await BreezeBinary.run(["hash", bundle.path]).status == 0)
            let sign = try await BreezeBinary.run(["sign", bundle.path, "--key", work.path("app.key").path])
            #expect(sign.status == 0 && sign.output.contains("object form"))
            #expect(try await BreezeBinary.run(["validate", bundle.path]).status == 0)

            let url = server.url.appendingPathComponent(ExampleBundle.name + "/").absoluteString
            let sync = try await BreezeBinary.run(["sync", url, work.path("live").path, "--trusted-key", publicKey, "--env", "appVersion=0.9"])
            #expect(sync.status == 0, "\(sync.error)")
            let second = try await BreezeBinary.run(["keygen", work.path("second.key").path, "--json"])
            let printed = try JSONSerialization.jsonObject(with: Data(second.output.utf8)) as? [String: String]
            #expect(try SigningKey(contentsOf: work.path("second.key")).publicKey.base64 == printed?["publicKey"])
            let other = SigningKey.generate().publicKey.base64
            let refused = try await BreezeBinary.run(["sync", url, work.path("other").path, "--trusted-key", other])
            #expect(refused.status == 65 && refused.error.contains("none of which this app trusts"))

            // A manifest edited after signing: validate names the stale signature.
            let rootURL = bundle.appendingPathComponent("manifest.json")
            let text = try String(contentsOf: rootURL, encoding: .utf8)
            try PublishedText.write(text.replacingOccurrences(of: "\"sequence\": 1", with: "\"sequence\": 2"), to: rootURL)
            let validate = try await BreezeBinary.run(["validate", bundle.path])
            #expect(validate.status == 1 && validate.output.contains("does not match the content: run `breeze sign` again"))
        }
    }
}
