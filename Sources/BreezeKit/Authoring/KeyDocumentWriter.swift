package import Foundation
package import FreshAir

/// `breeze keys create` and `breeze keys rotate`: writes a key document (see ``KeyDocument``),
/// version 1 or the one after `previous`, signed by `signers`. What devices would refuse (too
/// few signers of the previous version or of the new one) is not written.
package enum KeyDocumentWriter {
    /// Refuses `signers` when fewer than `set`'s threshold of them are among its keys.
    private static func requireSigners(_ signers: [SigningKey], of set: KeySet, _ whose: String, url: URL) throws {
        let counted = Set(signers.map(\.publicKey)).filter { set.keys.contains($0) }
        guard counted.count < set.threshold else { return }
        let which =
            counted.isEmpty
            ? "none is"
            : "only \(counted.count) \(counted.count == 1 ? "is" : "are") (\(counted.map(\.base64).sorted().joined(separator: ", ")))"
        throw SigningError(
            "\(url.lastPathComponent) must be signed by \(set.threshold) of the \(set.keys.count) keys \(whose); of the --key keys, \(which): add --key with \(set.threshold - counted.count) more of them"
        )
    }

    package static func write(
        members: [TrustedKey],
        threshold: Int,
        signers: [SigningKey],
        previous: KeyDocument? = nil,
        to url: URL
    ) throws -> KeyDocument {
        let version = (previous?.version ?? 0) + 1
        guard threshold <= Set(members).count else {
            throw SigningError(
                "a threshold of \(threshold) needs at least \(threshold) keys, and \(url.lastPathComponent) would list \(Set(members).count): add --member keys (by default the --key keys are its members)"
            )
        }
        // Said in the terms of the command: which of the --key keys count, and for which version.
        if let previous {
            try requireSigners(signers, of: previous.keySet, "version \(previous.version) lists", url: url)
        }
        try requireSigners(signers, of: KeySet(keys: members, threshold: threshold), "it lists itself", url: url)
        var json = JSONValue.object([
            ("format", JSONValue(1)), ("type", .string(KeyDocument.type)), ("version", JSONValue(version)),
            ("threshold", JSONValue(threshold)), ("keys", .array(members.map { .string($0.base64) })),
        ])
        let message = ManifestSignature.message(for: json)
        json.set(ManifestSignature.member, .array(try signers.map { try $0.sign(message).json }))
        let data = Data(json.serializedBytes(indent: 2) + [UInt8(ascii: "\n")])
        do {
            let document = try KeyDocument(data: data, source: url.path)
            if let previous {
                try previous.verifySuccessor(document, source: url.path)
            } else {
                try document.verifySelf(source: url.path)
            }
            guard !FileManager.default.fileExists(atPath: url.path) else {
                throw SigningError(
                    "\(url.path) exists; a published key document is never overwritten (write the next version)",
                    kind: .cannotWrite
                )
            }
            // `keys/1.json`, as the help suggests, in a folder that may not exist yet.
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try data.write(to: url, options: .withoutOverwriting)
            return document
        } catch let error as ManifestError {
            throw SigningError("devices would refuse this key document: \(error.detail)")
        }
    }
}
