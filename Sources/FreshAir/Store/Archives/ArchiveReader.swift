import Foundation

/// Unpacks a package file into a folder, streaming: input is read 1 MiB at a time and
/// decompressed, parsed and written as it goes, so memory stays flat whatever the size.
enum ArchiveReader {
    static let chunkSize = 1 << 20

    /// - Parameter singleFileName: the name for a plain `.gz` package's one file.
    /// - Returns: every file written and its digest.
    static func extract(
        _ file: String,
        format: ArchiveFormat,
        into destination: String,
        singleFileName: String,
        limits: ExtractionLimits
    ) throws -> [String: FileRecord] {
        if format == .zip {
            let extractor = try ArchiveExtractor(destination: destination, limits: limits)
            extractor.archiveBytesRead = Disk.status(file)?.size ?? 0
            try ZipReader(path: file).extract(into: extractor)
            return extractor.records
        }
        let stream = try ArchiveStream(
            format: format,
            destination: destination,
            singleFileName: singleFileName,
            limits: limits
        )!
        try readChunks(of: file, stream.feed)
        return try stream.finish()
    }

    static func readChunks(of path: String, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw Disk.failure("open", path) }
        defer { close(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = read(descriptor, buffer.baseAddress, chunkSize)
            if count < 0 {
                if errno == EINTR { continue }
                throw Disk.failure("read", path)
            }
            if count == 0 { return }
            try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
    }
}

/// A `.tar`, `.tgz` or `.gz` unpacked from bytes pushed in as they come: from a file, or
/// straight from the network while the package downloads.
final class ArchiveStream {
    private let format: ArchiveFormat
    private let extractor: ArchiveExtractor
    private var parser = TarParser()
    private let inflater: Inflater?
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

    /// `nil` for `.zip`, which is read through its central directory at the end of the file.
    /// With `recordingLayout`, a `.tar`'s `TarLayout` is recorded as it is unpacked.
    init?(
        format: ArchiveFormat,
        destination: String,
        singleFileName: String,
        limits: ExtractionLimits,
        recordingLayout: Bool = false
    ) throws {
        guard format != .zip else { return nil }
        self.format = format
        self.singleFileName = singleFileName
        layoutRecorder = recordingLayout && format == .tar ? TarLayoutRecorder() : nil
        extractor = try ArchiveExtractor(destination: destination, limits: limits)
        inflater = format == .tar ? nil : try Inflater(.gzip)
    }

    func feed(_ bytes: UnsafeRawBufferPointer) throws {
        extractor.archiveBytesRead += Int64(bytes.count)
        switch format {
        case .tar where layoutRecorder != nil: try layoutRecorder!.feed(bytes, to: &parser, extractor.handle)
        case .tar: try parser.feed(bytes, extractor.handle)
        case .tarGzip: try inflater!.inflate(bytes) { output in try parser.feed(output, extractor.handle) }
        case .gzip: try inflater!.inflate(bytes, sink: unpackedGzip)
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

    /// The `.tar`'s layout, when it was recorded and the archive is finished; `nil` otherwise
    /// (another format, or a layout abandoned as too large).
    var tarLayout: TarLayout? { parser.isFinished ? layoutRecorder?.recorded : nil }

    /// Checks the archive ended where it should and returns every file written.
    func finish() throws -> [String: FileRecord] {
        if let inflater, !inflater.isComplete { throw ArchiveError(.truncated, "the gzip data ends early") }
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
