import CZlib

/// zlib's inflate, one stream at a time: gzip (with every member of a multi-member file) or
/// raw deflate (zip entries).
final class Inflater {
    enum Wrapping {
        case gzip
        case rawDeflate
    }

    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
    private let wrapping: Wrapping
    /// The current stream (member) ended; more input starts a new member.
    private(set) var finishedMember = false
    /// Input seen since the last member ended that was not yet proven to be another member.
    private(set) var membersFinished = 0

    init(_ wrapping: Wrapping) throws(ArchiveError) {
        self.wrapping = wrapping
        stream.initialize(to: z_stream())
        let bits: Int32 = wrapping == .gzip ? 15 + 16 : -15
        guard inflateInit2_(stream, bits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw ArchiveError(.corrupt, "could not start zlib")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        output.deallocate()
    }

    /// Inflates all of `input`, handing each piece of output to `sink`.
    func inflate(_ input: UnsafeRawBufferPointer, sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard let base = input.baseAddress, !input.isEmpty else { return }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        while stream.pointee.avail_in > 0 {
            if finishedMember {
                // Another gzip member follows (`cat a.gz b.gz`): start it.
                guard wrapping == .gzip, inflateReset(stream) == Z_OK else { return }
                finishedMember = false
            }
            stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(output.count)
            let status = CZlib.inflate(stream, Z_NO_FLUSH)
            let produced = output.count - Int(stream.pointee.avail_out)
            if produced > 0 { try sink(UnsafeRawBufferPointer(rebasing: output[0..<produced])) }
            switch status {
            case Z_OK, Z_BUF_ERROR:
                continue
            case Z_STREAM_END:
                finishedMember = true
                membersFinished += 1
            case Z_NEED_DICT, Z_DATA_ERROR:
                let reason = stream.pointee.msg.map { String(cString: $0) } ?? "bad data"
                throw ArchiveError(.corrupt, "not valid \(wrapping == .gzip ? "gzip" : "deflate") data (\(reason))")
            case Z_MEM_ERROR:
                throw ArchiveError(.corrupt, "zlib ran out of memory")
            default:
                throw ArchiveError(.corrupt, "zlib failed with status \(status)")
            }
        }
    }

    /// Whether the last stream ended properly (not cut short).
    var isComplete: Bool { finishedMember }
}

/// The CRC-32 zip stores for each entry.
struct CRC32 {
    private(set) var value: UInt = 0

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        value = crc32(value, base.assumingMemoryBound(to: Bytef.self), uInt(bytes.count))
    }
}
