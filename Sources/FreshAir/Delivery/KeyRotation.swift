public import Foundation

/// Keys pinned through a key document that the publisher can rotate (TUF's root rotation),
/// instead of a fixed ``SyncConfiguration/trustedKeys`` list.
///
/// ```swift
/// configuration.keyRotation = try KeyRotation(
///     pinned: Data(contentsOf: Bundle.main.url(forResource: "1", withExtension: "json")!),
///     updates: URL(string: "https://cdn.example.com/keys/")!)
/// ```
///
/// Before each check, the device asks for the next version (`<updates>/<version + 1>.json`)
/// until there is none (`404`): one extra request per check while no rotation is published.
/// Each version must be signed by the threshold of the one before and by its own; the newest
/// accepted one is kept in the store, so a device offline across several rotations follows
/// them in order, and a removed key is no longer trusted anywhere.
public struct KeyRotation: Sendable {
    /// The key document the app ships; trusted as it is (it must be signed by its own threshold).
    package var pinned: KeyDocument
    /// The folder where newer versions are published as `<version>.json`; `nil`: no rotation.
    public var updates: URL?

    /// Trusts the key document `pinned` (the bytes of `keys/<n>.json` as `breeze` wrote it,
    /// shipped with the app) and follows the rotations published at `updates`
    /// (`<updates>/<n+1>.json`), when given.
    ///
    /// - Throws: a ``FreshAirError`` with code ``FreshAirError/Code/manifest`` when the
    ///   document is malformed or not signed by its own threshold.
    public init(pinned: Data, updates: URL? = nil) throws(FreshAirError) {
        do {
            let document = try KeyDocument(data: pinned, source: "the pinned key document")
            try document.verifySelf(source: "the pinned key document")
            self.init(pinned: document, updates: updates)
        } catch { throw FreshAirError.manifest(error) }
    }

    /// Trusts `pinned` as it is and follows the rotations at `updates`.
    package init(pinned: KeyDocument, updates: URL? = nil) {
        self.pinned = pinned
        self.updates = updates
    }

    /// How many rotations one check follows at most.
    static let maxSteps = 32

    /// The key set to verify with now, after following what was published; `nil` when the
    /// app pins no keys at all. The newest accepted document is saved at `statePath`.
    static func currentKeys(
        configuration: SyncConfiguration,
        statePath: String?,
        fetcher: Fetcher
    ) async throws -> KeySet? {
        guard let rotation = configuration.keyRotation else {
            return configuration.trustedKeys.isEmpty ? nil : KeySet(keys: configuration.trustedKeys)
        }
        do { try rotation.pinned.verifySelf(source: "the pinned key document") } catch {
            throw FreshAirError.manifest(error)
        }
        var current = rotation.pinned
        // What an earlier check accepted, unless the app now ships something newer.
        if let statePath, let data = await BlockingPool.contents(of: statePath),
            let stored = try? KeyDocument(data: data, source: statePath),
            stored.version > current.version
        {
            current = stored
        }
        guard let updates = rotation.updates else { return current.keySet }
        for _ in 0..<maxSteps {
            let url = updates.appendingPathComponent("\(current.version + 1).json")
            let data: Data
            do {
                guard
                    case .fetched(let body, _) = try await fetcher.document(at: url, validators: nil, limit: 256 << 10)
                else { break }
                data = body
            } catch let error as FreshAirError where error.status == 404 || error.status == 403 {
                break  // none published (S3 answers 403 for a missing object it may not list)
            }
            do throws(ManifestError) {
                let next = try KeyDocument(data: data, source: url.absoluteString)
                try current.verifySuccessor(next, source: url.absoluteString)
                current = next
            } catch { throw FreshAirError.manifest(error) }
            if let statePath { try await BlockingPool.run { try Disk.writeAtomically(data, to: statePath) } }
        }
        return current.keySet
    }
}
