import Foundation
import FreshAir

/// `breeze hash`'s chunk indexes: every listed file of at least the threshold gets a
/// ``ChunkIndex`` beside it (`<file>.freshair-chunks`), listed right after it in the same
/// manifest under the same condition, so devices that have an older copy fetch only the chunks
/// they lack. An index is written anew only when it no longer describes its file; an index
/// whose file is gone or now below the threshold is removed with its entry.
enum ChunkIndexing {
    /// What changed: the manifests whose entries were added or dropped (by index in
    /// `documents`), and the dropped entries, reported as stale in a check.
    struct Changes {
        var manifests: Set<Int> = []
        var dropped: [BundleHasher.Stale] = []
    }

    /// Brings `documents`' index entries and files up to date; `digests` gets each index's
    /// new digest. With `write` false (a check) nothing on disk changes.
    static func refresh(
        _ documents: inout [ManifestDocument],
        algorithms: [ContentHash.Algorithm],
        digests: inout [String: (ContentHash, Int64)],
        root: URL,
        threshold: Int64,
        write: Bool
    ) throws -> Changes {
        var changes = Changes()
        for index in documents.indices {
            let document = documents[index]
            let entries = document.entries
            let listed = Set(entries.compactMap { $0["filename"]?.string })
            var kept: [JSONValue] = []
            for entry in entries {
                guard let filename = entry["filename"]?.string else {
                    kept.append(entry)
                    continue
                }
                if filename.hasSuffix(ChunkIndex.suffix) {
                    let base = String(filename.dropLast(ChunkIndex.suffix.count))
                    if listed.contains(base), let (_, size) = digests[document.bundlePath(of: base)], size >= threshold
                    {
                        kept.append(entry)
                    } else {
                        let path = document.bundlePath(of: filename)
                        if write { try? FileManager.default.removeItem(at: root.appendingPathComponent(path)) }
                        changes.manifests.insert(index)
                        changes.dropped.append(
                            BundleHasher.Stale(
                                manifest: document.url.path.replacingOccurrences(of: root.path + "/", with: ""),
                                filename: filename,
                                recorded: (entry["sha"] ?? entry["SHA"])?.string,
                                actual: "(removed: \(base) is gone or below the chunk threshold)",
                                recordedSize: nil,
                                actualSize: 0
                            )
                        )
                    }
                    continue
                }
                kept.append(entry)
                let path = document.bundlePath(of: filename)
                guard !filename.hasSuffix("manifest.json"), let (hash, size) = digests[path], size >= threshold else {
                    continue
                }
                let indexName = filename + ChunkIndex.suffix
                let indexURL = root.appendingPathComponent(document.bundlePath(of: indexName))
                let indexPath = document.bundlePath(of: indexName)
                if !describes(indexURL, hash: hash, size: size) {
                    let data = try ChunkIndex.make(fileAt: root.appendingPathComponent(path).path).serialized()
                    if write { try data.write(to: indexURL, options: .atomic) }
                    digests[indexPath] = (ContentHash.of(data, using: algorithms[index]), Int64(data.count))
                } else if digests[indexPath] == nil {  // current, but not listed yet
                    digests[indexPath] = try ContentHash.ofFile(at: indexURL, using: algorithms[index])
                }
                if !listed.contains(indexName) {
                    // Selected exactly when its file is.
                    var indexEntry: JSONValue = .object([("filename", .string(indexName))])
                    for member in ["condition", "conditions"] {
                        if let value = entry[member] { indexEntry.set(member, value) }
                    }
                    kept.append(indexEntry)
                    changes.manifests.insert(index)
                }
            }
            documents[index].entries = kept
        }
        return changes
    }

    /// Whether the index at `url` is of the file with this digest and size (a SHA-1 digest
    /// cannot say: the index is then made again); with neither given, whether it is an index.
    static func describes(_ url: URL, hash: ContentHash?, size: Int64?) -> Bool {
        guard hash == nil || hash?.algorithm == .sha256, let data = FileManager.default.contents(atPath: url.path),
            let index = try? ChunkIndex(data: data, source: url.path)
        else { return false }
        return (hash ?? index.fileDigest) == index.fileDigest && (size ?? index.fileSize) == index.fileSize
    }
}
