import Foundation
import FreshAir

/// `breeze hash`: recomputes every entry's digest and size in a bundle's manifests, children
/// first so each parent records its children's new digests. Field names (`sha` or `SHA`),
/// order and conditions are kept; a manifest written with SHA-1 stays SHA-1 unless asked.
public enum BundleHasher {
    /// An entry whose recorded digest or size is not the file's.
    public struct Stale: Sendable, Hashable, Codable {
        public var manifest: String
        public var filename: String
        public var recorded: String?
        public var actual: String
        public var recordedSize: Int64?
        public var actualSize: Int64
    }

    public struct Report: Sendable, Codable {
        public var stale: [Stale] = []
        /// Listed files that do not exist.
        public var missing: [String] = []
        public var manifestsWritten: [String] = []
        public var filesHashed = 0
    }

    /// - Parameters:
    ///   - check: change nothing; report what is stale.
    ///   - sha256: move SHA-1 manifests to SHA-256.
    public static func run(bundle: URL, check: Bool = false, sha256: Bool = false) async throws -> Report {
        let root = bundle.standardizedFileURL
        var documents = try ManifestTreeOrder.postOrder(bundle: root)
        let manifestPaths = Set(documents.map { $0.folder.isEmpty ? "manifest.json" : "\($0.folder)/manifest.json" })

        // Hash every content file at once, across cores; manifests are hashed as they are rewritten.
        var jobs: [String: ContentHash.Algorithm] = [:]
        for document in documents {
            let algorithm = Self.algorithm(of: document, forceSHA256: sha256)
            for filename in document.entries.compactMap({ $0["filename"]?.string }) {
                let path = document.bundlePath(of: filename)
                if !manifestPaths.contains(path) { jobs[path] = algorithm }
            }
        }
        let digests = try await hashAll(jobs, in: root)

        var report = Report(filesHashed: digests.count)
        var manifestBytes: [String: Data] = [:]  // each processed manifest as it now stands, for its parent
        for index in documents.indices {
            var document = documents[index]
            let algorithm = Self.algorithm(of: document, forceSHA256: sha256)
            var entries = document.entries
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
                let recordedSize: Int64? = if case .number(let text)? = entries[entryIndex]["size"] { Int64(text) } else { nil }
                if recorded?.lowercased() != actual.0.hex || recordedSize != actual.1 {
                    report.stale.append(Stale(manifest: document.url.path.replacingOccurrences(of: root.path + "/", with: ""),
                                              filename: filename, recorded: recorded, actual: actual.0.hex,
                                              recordedSize: recordedSize, actualSize: actual.1))
                    entries[entryIndex].set(key, .string(actual.0.hex), after: "filename")
                    entries[entryIndex].set("size", .number(String(actual.1)), after: key)
                }
            }
            document.entries = entries
            let path = document.folder.isEmpty ? "manifest.json" : "\(document.folder)/manifest.json"
            manifestBytes[path] = document.serialized == document.original ? document.original : document.serialized
            if document.serialized != document.original {
                if !check {
                    try document.save()
                    report.manifestsWritten.append(path)
                }
            }
            documents[index] = document
        }
        return report
    }

    /// SHA-1 when the manifest already uses it (and no upgrade was asked), else SHA-256.
    static func algorithm(of document: ManifestDocument, forceSHA256: Bool) -> ContentHash.Algorithm {
        if forceSHA256 { return .sha256 }
        let digests = document.entries.compactMap { ($0["sha"] ?? $0["SHA"])?.string }
        return digests.contains { $0.count == 40 } && !digests.contains { $0.count == 64 } ? .sha1 : .sha256
    }

    /// Hashes files in parallel, one task per core.
    static func hashAll(_ jobs: [String: ContentHash.Algorithm], in root: URL) async throws -> [String: (ContentHash, Int64)] {
        let paths = jobs.keys.sorted()
        let workers = max(1, ProcessInfo.processInfo.activeProcessorCount)
        return try await withThrowingTaskGroup(of: [(String, (ContentHash, Int64))].self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var results: [(String, (ContentHash, Int64))] = []
                    for index in stride(from: worker, to: paths.count, by: workers) {
                        let path = paths[index]
                        let url = root.appendingPathComponent(path)
                        guard FileManager.default.fileExists(atPath: url.path) else { continue }
                        results.append((path, try ContentHash.ofFile(at: url, using: jobs[path]!)))
                    }
                    return results
                }
            }
            var all: [String: (ContentHash, Int64)] = [:]
            for try await batch in group { for (path, digest) in batch { all[path] = digest } }
            return all
        }
    }
}
