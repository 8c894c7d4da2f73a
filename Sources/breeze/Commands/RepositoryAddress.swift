import Foundation
import FreshAir

/// How `breeze sync` finds a repository from the URL it was given. A repository is synced as
/// `--repo ID` from its source, `<source>/<ID>/index.json`; a newcomer points at the index, or
/// at the repository's folder as if it were a bundle's.
enum RepositoryAddress {
    /// When a bundle sync failed because its folder has no `manifest.json`, and that folder
    /// holds a repository's `index.json` instead: the command that syncs it. One more request,
    /// made only after the failure.
    static func hint(
        for error: any Error,
        directory: String,
        transport: any HTTPTransport
    ) async -> String? {
        guard let error = error as? FreshAirError, error.status == 404, let manifest = error.url,
            manifest.lastPathComponent == "manifest.json"
        else { return nil }
        let folder = manifest.deletingLastPathComponent()
        let index = folder.appendingPathComponent("index.json")
        guard let data = await read(index, transport: transport),
            (try? RepositoryIndex(data: data, source: index.absoluteString)) != nil
        else { return nil }
        let source = folder.deletingLastPathComponent()
        let shownSource = source.isFileURL ? source.path : source.absoluteString
        return
            "\(folder.isFileURL ? folder.path : folder.absoluteString) holds a repository's index.json, not a bundle: `breeze sync \(shownSource) --repo \(folder.lastPathComponent) \(directory)` syncs each of its bundles."
    }

    /// A small document's bytes, or `nil` when it cannot be had (any status but 200).
    private static func read(_ url: URL, transport: any HTTPTransport) async -> Data? {
        if url.isFileURL {
            // Only a regular file of at most 1 MB is read: not a larger one whole, nor a FIFO.
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
                attributes[.type] as? FileAttributeType == .typeRegular,
                ((attributes[.size] as? NSNumber)?.intValue ?? .max) <= 1 << 20
            else { return nil }
            return FileManager.default.contents(atPath: url.path)
        }
        let request = HTTPGetRequest(url: url, timeout: .seconds(10), expectedBodySize: nil)
        return try? await transport.get(request) { head, body in
            head.status == 200 ? try await body.collect(upTo: 1 << 20, announced: head.contentLength) : nil
        }
    }
}
