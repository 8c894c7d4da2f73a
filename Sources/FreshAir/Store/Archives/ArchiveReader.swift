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
///
/// Two cores share the work: the thread that feeds it inflates, and a `BytePipe` hands the
/// unpacked bytes to an `ArchiveContentWriter` on a thread of its own, which parses the tar,
/// hashes and writes the files. Inflating is most of the work (a 515 MB `.tgz` takes one core
/// 2.3 s), and the rest no longer waits for it. A failure of the writer is thrown by the next
/// ``feed(_:)``, or by ``settle()`` or ``finish()``.
///
/// One thread feeds it; ``settle()`` or ``finish()`` before the folder is touched by anyone
/// else, since until then the writer may still be at work in it.
final class ArchiveStream {
    private let inflater: Inflater?
    private let writer: ArchiveContentWriter
    private let pipe: BytePipe
    private var archiveBytesRead: Int64 = 0

    /// `nil` for `.zip`, which is read through its central directory at the end of the file.
    /// With `recordingLayout`, a `.tar`'s `TarLayout` is recorded as it is unpacked.
    init?(
        format: ArchiveFormat,
        destination: String,
        singleFileName: String,
        limits: ExtractionLimits,
        recordingLayout: Bool = false,
        filter: ArchiveExtractor.Filter? = nil
    ) throws {
        guard format != .zip else { return nil }
        let writer = try ArchiveContentWriter(
            format: format,
            destination: destination,
            singleFileName: singleFileName,
            limits: limits,
            recordingLayout: recordingLayout,
            filter: filter
        )
        self.writer = writer
        inflater = format == .tar ? nil : try Inflater(.gzip)
        // Each archive holds at most four buffers in flight, and all of them fill at times (the
        // unpacking falls behind). Inflating paces a `.tar.gz`: buffers of 128 KB cost no time
        // there, and a repository of four unpacked at once peaked 1-2 MB lower than with 256 KB.
        // A `.tar` comes at copy speed, and keeps 256 KB: half the hand-offs.
        let bufferSize = inflater == nil ? 256 << 10 : 128 << 10
        pipe = BytePipe(name: "FreshAir.ArchiveStream", buffers: 4, bufferSize: bufferSize) { bytes, archiveBytesRead in
            try writer.write(bytes, archiveBytesRead: archiveBytesRead)
        }
    }

    deinit { pipe.abandon() }

    func feed(_ bytes: UnsafeRawBufferPointer) throws {
        if let failure = pipe.failure { throw failure }
        archiveBytesRead += Int64(bytes.count)
        guard let inflater else { return pipe.send(mark: archiveBytesRead, copying: bytes) }
        try inflater.inflate(bytes) { pipe.send(mark: archiveBytesRead, copying: $0) }
    }

    /// Waits until everything fed so far is written; rethrows the writer's failure.
    func settle() throws { try pipe.settle() }

    /// The `.tar`'s layout, when it was recorded and the archive is finished; `nil` otherwise
    /// (another format, or a layout abandoned as too large).
    var tarLayout: TarLayout? { writer.tarLayout }

    /// Checks the archive ended where it should and returns every file written.
    func finish() throws -> [String: FileRecord] {
        if let inflater, !inflater.isComplete {
            pipe.abandon()
            throw ArchiveError(.truncated, "the gzip data ends early")
        }
        try pipe.finish()
        return try writer.finish()
    }
}
