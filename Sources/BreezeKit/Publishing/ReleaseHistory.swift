package import Foundation
import FreshAir

/// `breeze history` and `breeze status`: what a destination has published, and what devices
/// get from it now, read from the destination alone (its root, and in the object layout the
/// publish history and the roots it names), so any machine with access can tell.
package enum ReleaseHistory {
    /// One release as `breeze history` lists it.
    package struct Release: Sendable, Codable, Equatable {
        /// The root manifest's SHA-256 (its object name in the store).
        package var sha256: String
        package var sequence: Int?
        /// When it became the destination's root; `nil` in histories written before 0.9.
        package var published: Date?
        package var expires: Date?
        /// The public keys whose signatures it carries.
        package var signers: [String]
        /// The paths it lists, child manifests' included (a staged release lists some twice:
        /// counted once), and the bytes of the distinct files it lists.
        package var files: Int
        package var bytes: Int64
        /// Who a staged release reaches; `nil`: everyone.
        package var staged: StagedRelease.Gate?
        /// The sequence of the release whose content a revert published again.
        package var restores: Int?
        /// Whether it is the root devices read now.
        package var live: Bool
    }

    /// Who gets which release now.
    package struct Audience: Sendable, Codable, Equatable {
        /// "everyone", "10% of installs on the channel beta", "every other install".
        package var who: String
        /// The sequence of the release whose files they get; `nil` when it is not known (a
        /// staged release's previous files, from before the history recorded them).
        package var sequence: Int?
    }

    /// What `breeze status` reports.
    package struct Status: Sendable, Codable {
        package var destination: String
        /// `manifest.json` (a bundle) or `index.json` (a repository).
        package var root: String
        /// `paths` or `objects` for a bundle.
        package var layout: String?
        package var live: Release
        package var audiences: [Audience]
        /// Whole days until devices refuse the live release (negative: they refuse it now).
        package var daysUntilExpiry: Int?
        package var warnings: [String]
    }

    /// Signatures expiring sooner than this are warned about.
    package static let warningDays = 7

    /// Every release in `destination`'s publish history, newest first: the live root first
    /// even when the history does not name it (the path layout keeps no history: it is the
    /// only entry).
    ///
    /// - Throws: ``PublishError`` when nothing is published there, or the root is unreadable.
    package static func list(at destination: any PublishDestination) async throws -> [Release] {
        let (live, _) = try await liveRoot(at: destination)
        return try await releases(at: destination, live: live).map(\.release)
    }

    /// What devices get from `destination` now, per audience, and how long the signature lasts.
    package static func status(at destination: any PublishDestination, now: Date) async throws -> Status {
        let (live, path) = try await liveRoot(at: destination)
        let releases = path == "manifest.json" ? try await releases(at: destination, live: live) : []
        var current: Release
        if let first = releases.first {
            current = first.release
        } else {
            current = try await summary(
                of: JSONReader.parse(live),
                sha256: ContentHash.of(live, using: .sha256).hex,
                store: nil
            )
        }
        current.live = true
        let manifest = try? Manifest(data: live, source: path)
        var status = Status(
            destination: destination.description,
            root: path,
            layout: manifest.map { $0.layout.description },
            live: current,
            audiences: [Audience(who: "everyone", sequence: current.sequence)],
            daysUntilExpiry: nil,
            warnings: []
        )
        if let gate = current.staged, let json = try? JSONReader.parse(live) {
            let before = previousRelease(of: json, among: releases.dropFirst())
            status.audiences = [
                Audience(who: gate.description, sequence: current.sequence),
                Audience(who: "every other install", sequence: before?.sequence),
            ]
        }
        if let expires = current.expires {
            let days = Int((expires.timeIntervalSince(now) / 86_400).rounded(.down))
            status.daysUntilExpiry = days
            if expires <= now {
                status.warnings.append(
                    "the signature expired \(ISO8601Timestamp.format(expires)): devices refuse this release"
                )
            } else if days < warningDays {
                status.warnings.append(
                    "the signature expires in \(days) day\(days == 1 ? "" : "s") (\(ISO8601Timestamp.format(expires))): renew it"
                )
            }
        }
        if status.layout == "paths" {
            status.warnings.append(
                "the path layout overwrites files in place: an interrupted release leaves devices refusing it until the next"
            )
        }
        return status
    }
}

extension ReleaseHistory {
    /// The destination's root: a bundle's manifest.json, else a repository's index.json.
    private static func liveRoot(at destination: any PublishDestination) async throws -> (Data, String) {
        for path in ["manifest.json", "index.json"] {
            if let data = try await destination.read(path) { return (data, path) }
        }
        throw PublishError(
            "nothing breeze released is at \(destination): it has no manifest.json or index.json",
            kind: .configuration
        )
    }

    /// A release as listed, with its root's JSON: what `status` compares a staged root's
    /// previous files with, without reading the roots again.
    private struct Loaded {
        var release: Release
        var json: JSONValue
    }

    /// The releases the history names, newest first, with the live root first.
    private static func releases(at destination: any PublishDestination, live: Data) async throws -> [Loaded] {
        let liveHex = ContentHash.of(live, using: .sha256).hex
        let store = try objectStore(of: live, at: destination)
        var releases: [Loaded] = []
        var sequences: [String: Int] = [:]
        var entries: [PublishHistory.Entry] = []
        if let store { entries = try await PublishHistory.read(for: destination, in: store) }
        for entry in entries {
            guard let data = entry.sha256 == liveHex ? live : try await store?.read(entry.sha256),
                let json = try? JSONReader.parse(data),
                var release = try? await summary(of: json, sha256: entry.sha256, store: store)
            else { continue }
            release.published = entry.published
            release.live = entry.sha256 == liveHex
            sequences[entry.sha256] = release.sequence
            releases.append(Loaded(release: release, json: json))
        }
        for index in releases.indices {
            let restores = entries.first { $0.sha256 == releases[index].release.sha256 }?.restores
            releases[index].release.restores = restores.flatMap { sequences[$0] }
        }
        // The live root first, even when the history does not name it (the path layout has none).
        if !releases.contains(where: \.release.live) {
            let json = try JSONReader.parse(live)
            var release = try await summary(of: json, sha256: liveHex, store: store)
            release.live = true
            releases.insert(Loaded(release: release, json: json), at: 0)
        }
        return releases
    }

    /// The object store of a bundle root in the object layout; `nil` for any other root.
    private static func objectStore(
        of root: Data,
        at destination: any PublishDestination
    ) throws
        -> (any PublishDestination)?
    {
        guard let manifest = try? Manifest(data: root, source: "manifest.json"),
            case .objects(let location) = manifest.layout
        else { return nil }
        return try destination.located(at: location)
    }

    /// A root's release fields, and the files its entries list, child manifests' (read from
    /// `store`, when given) included.
    private static func summary(
        of json: JSONValue,
        sha256: String,
        store: (any PublishDestination)?
    ) async throws
        -> Release
    {
        let release = try ReleaseFields(document: json, source: sha256)
        var paths = Set<String>()
        var sizes: [String: Int64] = [:]
        var pending = [("", json.array ?? json["files"]?.array ?? [])]
        // A repository's index: its bundles, by name, with their archives' sizes.
        for (name, bundle) in json["bundles"]?.pairs ?? [] {
            paths.insert(name)
            sizes[name] = bundle["size"]?.integer ?? 0
        }
        var read = Set<String>()
        while let (folder, entries) = pending.popLast() {
            for entry in entries {
                guard let name = entry["filename"]?.string ?? entry["name"]?.string else { continue }
                let hex = entry["sha"]?.string ?? entry["SHA"]?.string ?? entry["sha256"]?.string
                if name.hasSuffix(BundlePath.childManifestSuffix), let store, let hex, read.insert(hex).inserted,
                    read.count <= 10_000, let child = try await store.read(hex).flatMap({ try? JSONReader.parse($0) })
                {
                    let base = folder + name.split(separator: "/").dropLast().map { $0 + "/" }.joined()
                    pending.append((base, child.array ?? child["files"]?.array ?? []))
                    continue
                }
                paths.insert(folder + name)
                sizes[hex ?? folder + name] = entry["size"]?.integer ?? 0
            }
        }
        var signers: [String] = []
        for key in release.signatures.map(\.key) where !signers.contains(key) { signers.append(key) }
        return Release(
            sha256: sha256,
            sequence: release.sequence,
            published: nil,
            expires: release.expires,
            signers: signers,
            files: paths.count,
            bytes: sizes.values.reduce(0) { $0 &+ max(0, $1) },
            staged: StagedRelease.gate(of: json),
            restores: nil,
            live: false
        )
    }

    /// The release among `releases` whose files a staged root keeps for every other install.
    private static func previousRelease(of staged: JSONValue, among releases: ArraySlice<Loaded>) -> Release? {
        let previous = StagedRelease.base(of: staged).map { $0.serializedBytes(indent: 0) }
        // The release everyone had: not itself staged (a narrower rollout keeps the same base).
        return releases.first { loaded in
            loaded.release.staged == nil
                && StagedRelease.base(of: loaded.json).map({ $0.serializedBytes(indent: 0) }) == previous
        }?.release
    }
}
