import CZlib
import Foundation

/// Writes a gzip file with zlib's deflate, streaming: bytes are compressed as they come.
final class GzipWriter {
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
    private let file: FileHandle

    init(path: String, level: Int32 = 6) throws {
        file = try PackageWriter.createFile(path)
        stream.initialize(to: z_stream())
        guard
            deflateInit2_(
                stream,
                level,
                Z_DEFLATED,
                15 + 16,
                8,
                Z_DEFAULT_STRATEGY,
                ZLIB_VERSION,
                Int32(MemoryLayout<z_stream>.size)
            ) == Z_OK
        else {
            throw PackagingError("could not start zlib")
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        output.deallocate()
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(bytes.count)
        try pump(flush: Z_NO_FLUSH)
    }

    /// Flushes the last block and the gzip trailer, and closes the file.
    func finish() throws {
        stream.pointee.avail_in = 0
        try pump(flush: Z_FINISH)
        try file.close()
    }

    private func pump(flush: Int32) throws {
        repeat {
            stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(output.count)
            let status = deflate(stream, flush)
            guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                throw PackagingError("zlib deflate failed (\(status))")
            }
            let produced = output.count - Int(stream.pointee.avail_out)
            if produced > 0 { try file.write(contentsOf: UnsafeRawBufferPointer(rebasing: output[0..<produced])) }
            if flush == Z_FINISH && status == Z_STREAM_END { return }
        } while stream.pointee.avail_out == 0 || (flush == Z_FINISH)
    }
}

/// A packaging step that failed, in words for the terminal.
package struct PackagingError: Error, CustomStringConvertible {
    /// What kind of problem, for breeze's exit status.
    package enum Kind: Sendable {
        /// The content or the command's inputs are wrong (65).
        case content
        /// What would be written exists already, and is never overwritten (73).
        case exists
        /// Nothing could be written where asked (73).
        case cannotWrite
        /// Anything else (1).
        case failed
    }

    package let description: String
    package let kind: Kind
    package init(_ description: String, kind: Kind = .failed) {
        self.description = description
        self.kind = kind
    }
}
