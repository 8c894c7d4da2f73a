import Crypto
import Foundation
import FreshAir

/// `breeze publish --layout objects`: a bundle published as `manifest.json` plus one object per
/// distinct file, `objects/<sha256>` (see ``ContentLayout``).
///
/// 1. Every file any manifest of the bundle lists, child manifests included, is an object
///    named by its SHA-256; objects the store holds already (compared as the path layout
///    compares files) are not sent again, whichever version or bundle sent them.
/// 2. The root manifest is stored as an object too, and named in the store's history for
///    this destination (`objects/history/…json`), so that ``ObjectCollector`` knows what the
///    last versions of every bundle sharing the store need.
/// 3. Then `manifest.json` is overwritten: the one object that changes. A device reading it
///    at any moment finds every object it names.
enum ObjectLayout {
    /// The root manifest as it is published: with `"layout": "objects"` (and `"objects"` when
    /// not the default), added to an unsigned root that lacks them.
    ///
    /// - Throws: ``PublishError`` when a signed root records another layout (the signature
    ///   covers it: sign again with `--layout`).
    static func rootDocument(bundle root: URL, location: String?) throws -> (data: Data, location: String) {
        let url = root.appendingPathComponent("manifest.json")
        let original = try Data(contentsOf: url)
        let manifest = try Manifest(data: original, source: url.path)
        let wanted = location ?? ContentLayout.defaultLocation
        if case .objects(let recorded) = manifest.layout, location == nil || recorded == wanted {
            return (original, recorded)
        }
        guard manifest.signatures.isEmpty else {
            throw PublishError(
                "manifest.json is signed for the \(manifest.layout) layout, and its signature covers the layout: "
                    + "run `breeze sign --layout objects\(wanted == ContentLayout.defaultLocation ? "" : " --objects \(wanted)")` "
                    + "(or publish with --layout paths)"
            )
        }
        var json = try JSONReader.parse(original)
        record(.objects(at: wanted), in: &json)
        var bytes = json.serializedBytes(indent: JSONValue.indentation(of: original))
        bytes.append(UInt8(ascii: "\n"))
        return (Data(bytes), wanted)
    }

    /// Writes `layout` into a root manifest's JSON, moving a legacy array to the object form.
    static func record(_ layout: ContentLayout, in json: inout JSONValue) {
        if case .array(let entries) = json {
            json = .object([("format", JSONValue(2)), ("files", .array(entries))])
        }
        switch layout {
        case .paths:
            json.remove(ContentLayout.member)
            json.remove(ContentLayout.locationMember)
        case .objects(let location):
            json.set(ContentLayout.member, "objects", after: "format")
            if location == ContentLayout.defaultLocation {
                json.remove(ContentLayout.locationMember)
            } else {
                json.set(ContentLayout.locationMember, .string(location), after: ContentLayout.member)
            }
        }
    }

    /// One object per distinct SHA-256 among every manifest's entries, named by it.
    ///
    /// - Throws: ``PublishError`` naming an entry without a SHA-256 digest.
    static func objects(of bundle: URL) throws -> [LocalFile] {
        var objects: [String: LocalFile] = [:]
        for document in try ManifestTreeOrder.postOrder(bundle: bundle) {
            let manifest = try Manifest(data: document.original, source: document.url.path)
            for entry in manifest.entries {
                let path = document.bundlePath(of: entry.path.string)
                guard let hash = entry.hash, hash.algorithm == .sha256 else {
                    throw PublishError(
                        "\(path) has \(entry.hash == nil ? "no digest" : "a SHA-1 digest"); the object layout names every "
                            + "file by its SHA-256: run `breeze hash --sha256` first"
                    )
                }
                guard objects[hash.hex] == nil else { continue }
                let url = bundle.appendingPathComponent(path)
                let size =
                    ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.int64Value
                    ?? 0
                objects[hash.hex] = LocalFile(path: hash.hex, url: url, size: size, isImmutable: true)
            }
        }
        return objects.values.sorted { $0.path < $1.path }
    }

    /// Publishes `bundle` in the object layout; see the type's summary for the order.
    /// `root`, when given, goes up in place of the bundle's own root manifest (a staged
    /// release's, which also names the previous release's objects, already in the store).
    static func publish(
        bundle: URL,
        location requested: String?,
        to destination: any PublishDestination,
        delete: Bool,
        dryRun: Bool,
        concurrency: Int,
        collect: ObjectCollector?,
        root: Data? = nil,
        transaction: RootTransaction,
        progress: @escaping @Sendable (TransferProgress) -> Void = { _ in }
    ) async throws -> Publisher.Report {
        let (bundleRoot, location) = try rootDocument(bundle: bundle, location: requested)
        let rootData = root ?? bundleRoot
        // A bundle's root is always read first (`LiveRoot.read(of:at:)`): nothing there is a root
        // with no object, never nil.
        guard let live = transaction.live else {
            throw PublishError("\(destination)/manifest.json was not read before publishing over it", kind: .local)
        }
        var report = Publisher.Report(dryRun: dryRun)
        try transaction.admit(rootData, at: destination, into: &report)
        let objects = try objects(of: bundle)
        let named = objects.map {
            LocalFile(path: String($0.url.path.dropFirst(bundle.path.count + 1)), url: $0.url, size: $0.size)
        }
        try SecretScan.refuse(named, signedAs: rootData, path: "manifest.json")
        let (store, here, stored) = try await listing(of: destination, objectsAt: location)
        let inside = !location.hasPrefix("../")

        let rootHex = ContentHash.of(rootData, using: .sha256).hex
        var rootUnchanged = false
        if here["manifest.json"]?.size == Int64(rootData.count) {
            rootUnchanged = try await destination.read("manifest.json") == rootData
        }
        // An object there is compared like any file (by digest or ETag), not trusted by name:
        // bytes damaged in the store are replaced.
        let held = try await Publisher.inParallel(objects.indices, width: concurrency) { index -> Bool in
            guard let object = stored[objects[index].path] else { return false }
            return try await store.holds(objects[index], as: object)
        }
        // The root's pack stays beside it, at its own name (its digest's): sent before the root
        // that names it unless there already, never deleted while named.
        let pack = try packFile(of: bundle, named: rootData)
        let packMissing = pack.map { here[$0.path]?.size != $0.size } ?? false
        let missing = zip(objects, held).filter { !$0.1 }.map(\.0) + (packMissing ? [pack!] : [])
        let stale =
            delete
            ? here.keys.filter {
                $0 != "manifest.json" && $0 != pack?.path && !(inside && $0.hasPrefix(location))
            }.sorted() : []

        report.unchanged = objects.count + (pack == nil ? 0 : 1) - missing.count
        report.layout = ContentLayout.objects(at: location).description
        let names =
            missing.map { $0.path == pack?.path ? $0.path : location + $0.path }
            + (rootUnchanged ? [] : ["manifest.json"])
        if rootUnchanged { report.unchanged += 1 }
        if dryRun {
            report.uploaded = names
            report.bytesUploaded = missing.reduce(0) { $0 + $1.size } + (rootUnchanged ? 0 : Int64(rootData.count))
            report.deleted = stale
            if let collect { report.collected = try await collect.run(in: store, also: rootHex, dryRun: true) }
            return report
        }
        let counter = UploadCounter(
            files: missing.count + (rootUnchanged ? 0 : 1),
            bytes: missing.reduce(0) { $0 + $1.size } + (rootUnchanged ? 0 : Int64(rootData.count)),
            report: progress
        )
        let sent = try await Publisher.inParallel(missing.indices, width: concurrency) { index in
            let target = missing[index].path == pack?.path ? destination : store
            let bytes = try await target.upload(missing[index], replacing: nil)
            counter.finished(bytes: missing[index].size)
            return bytes
        }
        report.bytesUploaded = sent.reduce(0, +)
        if !rootUnchanged {
            try await switchRoot(to: rootData, at: destination, store: store, stored: stored, live: live)
            report.bytesUploaded += Int64(rootData.count)
            counter.finished(bytes: Int64(rootData.count))
        }
        report.uploaded = names
        report.accessGranted = try await store.grantAccess(to: zip(objects, held).filter(\.1).map(\.0.path))
        if rootUnchanged { report.accessGranted += try await destination.grantAccess(to: ["manifest.json"]) }
        for path in stale {
            try await destination.delete(path)
            report.deleted.append(path)
        }
        if let collect { report.collected = try await collect.run(in: store, also: rootHex, dryRun: false) }
        return report
    }
}

extension ObjectLayout {
    /// The pack the root manifest `data` names, as a file of `bundle` to publish beside it.
    static func packFile(of bundle: URL, named data: Data) throws -> LocalFile? {
        guard let pack = try Manifest(data: data, source: "manifest.json").pack else { return nil }
        guard FilePackWriter.sizeOnDisk(of: pack, in: bundle) == pack.size else {
            throw PublishError(
                "manifest.json names the pack \(pack.path), which is not beside it at \(pack.size) bytes: run `breeze generate`"
            )
        }
        let url = bundle.appendingPathComponent(pack.path.string)
        return LocalFile(path: pack.path.string, url: url, size: pack.size, isImmutable: true)
    }

    /// The object store at `location` (relative to `destination`), what `destination` holds,
    /// and what the store holds, by object name. Objects inside the destination are in its
    /// listing already: no second listing.
    static func listing(
        of destination: any PublishDestination,
        objectsAt location: String
    ) async throws -> (
        store: any PublishDestination, here: [String: PublishedObject], stored: [String: PublishedObject]
    ) {
        let store = try destination.located(at: location)
        let here = try await destination.list()
        guard !location.hasPrefix("../") else { return (store, here, try await store.list()) }
        let stored = here.reduce(into: [String: PublishedObject]()) { result, item in
            if item.key.hasPrefix(location) { result[String(item.key.dropFirst(location.count))] = item.value }
        }
        return (store, here, stored)
    }

    /// Makes `rootData` the destination's root manifest, every object it names being in the
    /// store already: stored as an object itself, named first in the history, then written as
    /// `manifest.json`, the one write devices see, only while the root is still `live`
    /// (another release that got there first wins; this one writes nothing devices read, and
    /// its history entry is taken out again). `restores`: the root a revert publishes again.
    static func switchRoot(
        to rootData: Data,
        at destination: any PublishDestination,
        store: any PublishDestination,
        stored: [String: PublishedObject],
        live: LiveRoot,
        restores: String? = nil,
        now: Date = Date()
    ) async throws {
        let rootHex = ContentHash.of(rootData, using: .sha256).hex
        if stored[rootHex] == nil {
            try await store.upload(rootData, at: rootHex, immutable: true, replacing: nil)
        }
        // Named before it is live, so a collector never takes the live root's objects.
        // To the second, as the history records it: `remove` finds this very entry.
        let second = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let entry = PublishHistory.Entry(sha256: rootHex, published: second, restores: restores)
        try await PublishHistory.add(entry, for: destination, in: store)
        do {
            _ = try await live.replace(with: rootData, at: destination)
        } catch let error as PublishError where error.kind == .conflict {
            try? await PublishHistory.remove(entry, for: destination, in: store)
            throw error
        }
    }
}
