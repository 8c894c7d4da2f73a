import Foundation

/// The unpacked bytes of a `.tar`, `.tgz` or `.gz`, in order, turned into files: the tar parsed
/// (its layout recorded when asked) and each entry written by an `ArchiveExtractor`; a `.gz`
/// that holds a single file written as that file. `ArchiveStream` inflates and feeds it.
///
/// Unchecked `Sendable`: one thread at a time calls it, the `BytePipe`'s while bytes come and
/// the stream's owner once the pipe has finished.
final class ArchiveContentWriter: @unchecked Sendable {
    private let format: ArchiveFormat
    private let extractor: ArchiveExtractor
    private var parser = TarParser()
    private let singleFileName: String
    /// What a `.gz` holds, told by its first 512 unpacked bytes: Fresh's own setup made its
    /// package with `tar -czf content.gz`, so a `.gz` may be a whole tar archive.
    private var gzipContent = GzipContent.undecided([])
    /// Records a `.tar`'s layout as it is unpacked, when asked to.
    private var layoutRecorder: TarLayoutRecorder?

    private enum GzipContent {
        case undecided([UInt8])
        case tar
        case singleFile
    }

    init(
        format: ArchiveFormat,
        destination: String,
        singleFileName: String,
        limits: ExtractionLimits,
        recordingLayout: Bool,
        filter: ArchiveExtractor.Filter? = nil
    ) throws {
        self.format = format
        self.singleFileName = singleFileName
        layoutRecorder = recordingLayout && format == .tar ? TarLayoutRecorder() : nil
        extractor = try ArchiveExtractor(destination: destination, limits: limits, filter: filter)
    }

    /// Writes the next unpacked bytes; `archiveBytesRead` is how much of the archive had been
    /// read when they were made, for the expansion limit.
    func write(_ bytes: UnsafeRawBufferPointer, archiveBytesRead: Int64) throws {
        extractor.archiveBytesRead = archiveBytesRead
        switch format {
        case .tar where layoutRecorder != nil: try layoutRecorder!.feed(bytes, to: &parser, extractor.handle)
        case .tar, .tarGzip: try parser.feed(bytes, extractor.handle)
        case .gzip: try unpackedGzip(bytes)
        case .zip: break
        }
    }

    private func unpackedGzip(_ bytes: UnsafeRawBufferPointer) throws {
        switch gzipContent {
        case .tar: try parser.feed(bytes, extractor.handle)
        case .singleFile: try extractor.write(bytes)
        case .undecided(var head):
            head.append(contentsOf: bytes)
            guard head.count >= 512 else {
                gzipContent = .undecided(head)
                return
            }
            try decide(head)
        }
    }

    /// Starts the `.gz` as a tar archive or as one file, and passes on what was held back.
    private func decide(_ head: [UInt8]) throws {
        if TarParser.startsWithHeader(head) {
            gzipContent = .tar
        } else {
            gzipContent = .singleFile
            try extractor.begin(ArchiveEntry(path: singleFileName, kind: .file, size: nil, mode: 0o644))
        }
        try head.withUnsafeBytes(unpackedGzip)
    }

    /// The `.tar`'s layout, when it was recorded and the archive is finished; `nil` otherwise.
    var tarLayout: TarLayout? { parser.isFinished ? layoutRecorder?.recorded : nil }

    /// Checks the tar ended where it should and returns every file written.
    func finish() throws -> [String: FileRecord] {
        if format == .gzip {
            if case .undecided(let head) = gzipContent { try decide(head) }  // shorter than a tar header
            if case .singleFile = gzipContent {
                try extractor.end()
                return extractor.records
            }
        }
        try parser.finish()
        return extractor.records
    }
}
