package import Foundation
import FreshAir
import Synchronization

/// `breeze hash`: recomputes every entry's digest and size in a bundle's manifests, children
/// first so each parent records its children's new digests. Field names (`sha` or `SHA`),
/// order and conditions are kept; a manifest written with SHA-1 stays SHA-1 unless asked.
/// A missing `size` is not staleness: a manifest whose digests are current is left as it is,
/// and one rewritten for a stale digest gets every missing size filled in.
/// A root manifest with a `sequence` that changes gets the next one.
package enum BundleHasher {
    /// An entry whose recorded digest or size is not the file's.
    package struct Stale: Sendable, Hashable, Codable {
        package var manifest: String
        package var filename: String
        package var recorded: String?
        package var actual: String
        package var recordedSize: Int64?
        package var actualSize: Int64
    }

    package struct Report: Sendable, Codable {
        package var stale: [Stale] = []
        /// Listed files that do not exist.
        package var missing: [String] = []
        package var manifestsWritten: [String] = []
        package var filesHashed = 0
        /// The root manifest's new `sequence`, when it has one and its content changed.
        package var sequence: Int?
        /// The root manifest changed, so its signatures no longer matched and were removed.
        package var signaturesRemoved = 0
    }

    /// - Parameters:
    ///   - check: change nothing; report what is stale.
    ///   - sha256: move SHA-1 manifests to SHA-256.
    ///   - chunkThreshold: files at least this large get a chunk index (``ChunkIndex``);
    ///     `nil`: none, and existing ones are left as they are.
    package static func run(
        bundle: URL,
        check: Bool = false,
        sha256: Bool = false,
        chunkThreshold: Int64? = ChunkIndex.defaultThreshold,
        movesSequence: Bool = true
    ) async throws -> Report {
        let root = bundle.standardizedFileURL
        var documents = try ManifestTreeOrder.postOrder(bundle: root)
        let manifestPaths = Set(documents.map { $0.folder.isEmpty ? "manifest.json" : "\($0.folder)/manifest.json" })

        // Hash every content file at once, across cores; manifests are hashed as they are rewritten.
        let algorithms = documents.map { Self.algorithm(of: $0, forceSHA256: sha256) }
        var digests = try await hashAll(
            contentFiles(of: documents, algorithms: algorithms, besides: manifestPaths),
            in: root
        )
        var report = Report(filesHashed: digests.count)
        var restructured: Set<Int> = []
        if let chunkThreshold {
            let changes = try ChunkIndexing.refresh(
                &documents,
                algorithms: algorithms,
                digests: &digests,
                root: root,
                threshold: chunkThreshold,
                write: !check
            )
            restructured = changes.manifests
            report.stale += changes.dropped
        }

        var manifestBytes: [String: Data] = [:]  // each processed manifest as it now stands, for its parent
        for index in documents.indices {
            var document = documents[index]
            var entries = document.entries
            let (stale, sizeless) = refresh(
                &entries,
                of: document,
                algorithm: algorithms[index],
                digests: digests,
                manifestBytes: manifestBytes,
                root: root,
                report: &report
            )
            let changed = stale || restructured.contains(index)
            let path = document.folder.isEmpty ? "manifest.json" : "\(document.folder)/manifest.json"
            // An untouched manifest is neither re-serialized nor rewritten.
            guard changed else {
                manifestBytes[path] = document.original
                continue
            }
            for (entryIndex, key, size) in sizeless {
                entries[entryIndex].set("size", .number(String(size)), after: key)
            }
            document.entries = entries
            // Changed content gets the next sequence, so devices take it and refuse older copies.
            // (Not when a signing follows at once, which moves it itself: one release, one step.)
            if movesSequence, document.folder.isEmpty, let sequence = document.json["sequence"]?.integer {
                let next = try ReleaseSequence.after(Int(sequence), in: "manifest.json", kind: .source)
                document.json.set("sequence", JSONValue(next))
                report.sequence = next
            }
            // Signatures cover the old content: devices would refuse them. `breeze sign` again.
            if document.folder.isEmpty, let signatures = document.json[ManifestSignature.member]?.array {
                document.json.remove(ManifestSignature.member)
                report.signaturesRemoved = signatures.count
            }
            let data = document.serialized
            manifestBytes[path] = data
            if !check, try document.save(data) { report.manifestsWritten.append(path) }
            documents[index] = document
        }
        return report
    }

    /// Brings `entries` (of `document`) up to the files' digests and sizes, reporting each
    /// stale or missing one. A child manifest's digest is of its bytes as rewritten just before
    /// (`manifestBytes`: manifests are processed children first).
    ///
    /// - Returns: whether any entry was stale, and the entries current but for a missing
    ///   `size` (older tools wrote none): not stale, given their size only when the manifest is
    ///   rewritten anyway.
    private static func refresh(
        _ entries: inout [JSONValue],
        of document: ManifestDocument,
        algorithm: ContentHash.Algorithm,
        digests: [String: (ContentHash, Int64)],
        manifestBytes: [String: Data],
        root: URL,
        report: inout Report
    ) -> (stale: Bool, sizeless: [(index: Int, key: String, size: Int64)]) {
        var stale = false
        var sizeless: [(index: Int, key: String, size: Int64)] = []
        for entryIndex in entries.indices {
            guard let filename = entries[entryIndex]["filename"]?.string else { continue }
            let path = document.bundlePath(of: filename)
            let actual: (ContentHash, Int64)
            if let data = manifestBytes[path] {
                actual = (ContentHash.of(data, using: algorithm), Int64(data.count))
            } else if let digest = digests[path] {
                actual = digest
            } else {
                report.missing.append(path)
                continue
            }
            let key = entries[entryIndex]["SHA"] != nil && entries[entryIndex]["sha"] == nil ? "SHA" : "sha"
            let recorded = entries[entryIndex][key]?.string
            let recordedSize: Int64? =
                if case .number(let text)? = entries[entryIndex]["size"] { Int64(text) } else { nil }
            let sizeIsStale = recordedSize.map { $0 != actual.1 } ?? false
            if recorded?.lowercased() == actual.0.hex, !sizeIsStale {
                if recordedSize == nil { sizeless.append((entryIndex, key, actual.1)) }
                continue
            }
            report.stale.append(
                Stale(
                    manifest: document.url.path.replacingOccurrences(of: root.path + "/", with: ""),
                    filename: filename,
                    recorded: recorded,
                    actual: actual.0.hex,
                    recordedSize: recordedSize,
                    actualSize: actual.1
                )
            )
            entries[entryIndex].set(key, .string(actual.0.hex), after: "filename")
            entries[entryIndex].set("size", .number(String(actual.1)), after: key)
            stale = true
        }
        return (stale, sizeless)
    }

    /// The content files the manifests list, each once, with the algorithm of the manifest
    /// that lists it first: in manifest order, since authors list a folder's files together.
    private static func contentFiles(
        of documents: [ManifestDocument],
        algorithms: [ContentHash.Algorithm],
        besides manifestPaths: Set<String>
    ) -> [(path: String, algorithm: ContentHash.Algorithm)] {
        var jobs: [(path: String, algorithm: ContentHash.Algorithm)] = []
        var listed = manifestPaths
        for (document, algorithm) in zip(documents, algorithms) {
            for filename in document.entries.compactMap({ $0["filename"]?.string }) {
                let path = document.bundlePath(of: filename)
                if listed.insert(path).inserted { jobs.append((path, algorithm)) }
            }
        }
        return jobs
    }

    /// SHA-1 when the manifest already uses it (and no upgrade was asked), else SHA-256.
    static func algorithm(of document: ManifestDocument, forceSHA256: Bool) -> ContentHash.Algorithm {
        if forceSHA256 { return .sha256 }
        let digests = document.entries.compactMap { ($0["sha"] ?? $0["SHA"])?.string }
        return digests.contains { $0.count == 40 } && !digests.contains { $0.count == 64 } ? .sha1 : .sha256
    }

    /// Hashes files in parallel, one task per core, each taking the next run of files until
    /// none are left.
    static func hashAll(
        _ paths: [(path: String, algorithm: ContentHash.Algorithm)],
        in root: URL
    ) async throws -> [String: (ContentHash, Int64)] {
        let workers = max(1, ProcessInfo.processInfo.activeProcessorCount)
        let rootPath = root.path
        let nextRun = SharedCounter()
        let runLength = 32
        return try await withThrowingTaskGroup(of: [(String, (ContentHash, Int64))].self) { group in
            for _ in 0..<workers {
                group.addTask {
                    var results: [(String, (ContentHash, Int64))] = []
                    let hasher = FileHasher()
                    while true {
                        let start = nextRun.value.wrappingAdd(runLength, ordering: .relaxed).oldValue
                        guard start < paths.count else { return results }
                        for (path, algorithm) in paths[start..<min(start + runLength, paths.count)] {
                            // A listed file that does not exist is reported as missing, not an error.
                            guard
                                let digest = try FileDigests.digest(
                                    atPath: rootPath + "/" + path,
                                    using: algorithm,
                                    hasher: hasher
                                )
                            else {
                                continue
                            }
                            results.append((path, digest))
                        }
                    }
                }
            }
            var all: [String: (ContentHash, Int64)] = [:]
            for try await batch in group { for (path, digest) in batch { all[path] = digest } }
            return all
        }
    }
}

/// A counter the hashing tasks share.
private final class SharedCounter: Sendable {
    let value = Atomic<Int>(0)
}
