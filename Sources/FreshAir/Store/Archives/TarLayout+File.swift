import Foundation

extension TarLayout {
    /// Reads the tar at `path` (headers only matter, but it reads every byte: the parser is
    /// the extractor's) and notes where each installed file's data lies.
    ///
    /// - Throws: ``FreshAirError`` when the file cannot be read, `ArchiveError` when it is
    ///   not a tar archive the extractor would install or its layout would keep more than
    ///   `keptByteLimit` bytes (see `TarLayoutRecorder`).
    static func scan(
        tarAt path: String,
        keptByteLimit: Int = TarLayoutRecorder.defaultKeptByteLimit
    ) throws -> TarLayout {
        var parser = TarParser()
        var recorder = TarLayoutRecorder(keptByteLimit: keptByteLimit)
        try ArchiveReader.readChunks(of: path) { try recorder.feed($0, to: &parser) { _ in } }
        try parser.finish()
        guard let layout = recorder.recorded else {
            throw ArchiveError(.tooLarge, "more than \(keptByteLimit) bytes that are not file data")
        }
        return layout
    }
}
