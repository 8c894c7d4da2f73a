package import Foundation

/// Mirrors: byte-identical copies of one published destination (the same name and layout, so
/// the same signed documents), reached by replication or by publishing to each. An update
/// tries them in order, the one that answered last time first, and moves to the next on what a
/// mirror can be wrong about: the network, a server error, a missing file, a body that fails
/// its digest or size, a document that is refused (unsigned, badly signed, older than the
/// floor, for another identity, expired). What is wrong here, not there (the store locked, the
/// disk full, a folder in the way) ends the update at once. With keys pinned every mirror is
/// untrusted transport: the floor follows the signed identity (``RootAcceptance``), so no
/// mirror can take a device lower than another gave it.
///
/// One mechanism for the three delivery modes: each source is an updater of its own, sharing
/// one store.
package struct SourceFailover: Sendable {
    /// The primary first, then the mirrors, as the app gave them.
    package let sources: [URL]
    /// Where the source that answered last is remembered (`source.json` in the store's state).
    package let memory: String

    package init(sources: [URL], memory: String) {
        self.sources = sources
        self.memory = memory
    }

    /// `sources` with `preferred` (the one that answered last) moved first.
    package static func order(_ sources: [URL], preferred: String?) -> [URL] {
        guard let preferred, let index = sources.firstIndex(where: { $0.absoluteString == preferred }) else {
            return sources
        }
        return [sources[index]] + sources.enumerated().filter { $0.offset != index }.map(\.element)
    }

    /// Whether a failure from one source is worth trying the next one for.
    package static func triesNext(after error: any Error) -> Bool {
        if error is CancellationError { return false }
        guard let error = error as? FreshAirError else { return false }
        switch error.code {
        case .transport, .manifest, .hashMismatch, .sizeMismatch, .declaredSizeMismatch, .unrequestedEncoding,
            .archive, .bodyTooLarge, .unsafePath:
            return true
        case .httpStatus: return true  // a 404 or 5xx from one mirror says nothing of the next
        default: return false
        }
    }

    /// Runs `attempt` with each source in turn until one succeeds; remembers it. When every
    /// source fails, throws the first source's error (the others' say the same or less).
    package func run(_ attempt: (URL) async throws -> SyncSummary) async throws -> SyncSummary {
        if sources.count == 1 { return try await attempt(sources[0]) }  // nothing to choose, or remember
        let preferred = try? await BlockingPool.run { [memory] in Self.remembered(at: memory) }
        var first: (any Error)?
        for source in Self.order(sources, preferred: preferred ?? nil) {
            do {
                let summary = try await attempt(source)
                if source.absoluteString != preferred ?? nil {
                    try? await BlockingPool.run { [memory] in try Self.remember(source, at: memory) }
                }
                return summary
            } catch {
                guard Self.triesNext(after: error) else { throw error }
                if first == nil { first = error }
            }
        }
        throw first ?? CancellationError()
    }

    static func remembered(at path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return (try? JSONReader.parse(data))?["source"]?.string
    }

    static func remember(_ source: URL, at path: String) throws {
        try Disk.createDirectory((path as NSString).deletingLastPathComponent)
        let document: JSONValue = .object([("source", .string(source.absoluteString))])
        try Disk.writeAtomically(Data(document.serializedBytes()), to: path)
    }
}
