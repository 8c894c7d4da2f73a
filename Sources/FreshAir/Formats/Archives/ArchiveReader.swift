import Foundation

/// Unpacks a package file into a folder, streaming: input is read 1 MiB at a time and
/// decompressed, parsed and written as it goes, so memory stays flat whatever the size.
enum ArchiveReader {
    static let chunkSize = 1 << 20

    /// - Parameter singleFileName: the name for a plain `.gz` package's one file.
    /// - Returns: every file written and its digest.
    static func extract(
        _ file: String, format: ArchiveFormat, into destination: String, singleFileName: String, limits: ExtractionLimits
    ) throws -> [String: FileRecord] {
        let extractor = ArchiveExtractor(destination: destination, limits: limits)
        switch format {
        case .tar:
            var parser = TarParser()
            try readChunks(of: file) { chunk in try parser.feed(chunk, extractor.handle) }
            try parser.finish()
        case .tarGzip:
            var parser = TarParser()
            let inflater = try Inflater(.gzip)
            try readChunks(of: file) { chunk in
                try inflater.inflate(chunk) { output in try parser.feed(output, extractor.handle) }
            }
            guard inflater.isComplete else { throw ArchiveError(.truncated, "the gzip data ends early") }
            try parser.finish()
        case .gzip:
            let inflater = try Inflater(.gzip)
            try extractor.begin(ArchiveEntry(path: singleFileName, kind: .file, size: nil, mode: 0o644))
            try readChunks(of: file) { chunk in try inflater.inflate(chunk, sink: extractor.write) }
            guard inflater.isComplete else { throw ArchiveError(.truncated, "the gzip data ends early") }
            try extractor.end()
        case .zip:
            try ZipReader(path: file).extract(into: extractor)
        }
        return extractor.records
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
