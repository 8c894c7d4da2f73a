/// Builds a `TarLayout` from a tar archive's bytes as they pass through a `TarParser`, in
/// order: from a file (`TarLayout/scan(tarAt:)`), or from a package as it is unpacked while
/// it arrives, so that no one reads the package again to learn its layout.
///
/// The layout keeps in memory every byte that is not a file's data (headers, and whatever
/// follows the end marker). A real package has 512 bytes of header per file; one with more
/// than ``keptByteLimit`` of them is not worth rebuilding, and gets no layout.
struct TarLayoutRecorder {
    /// The most bytes a layout keeps that are neither file data nor zeros.
    let keptByteLimit: Int
    /// 64 MiB: the headers of 130,000 files.
    static let defaultKeptByteLimit = 64 << 20
    /// Zero runs shorter than this stay inside the bytes around them.
    private static let shortestZeroRun = 32

    private var layout = TarLayout(size: 0, segments: [])
    private var keptBytes = 0
    /// Zeros at the end of what was fed, not yet placed: they may go on in the next bytes.
    private var pendingZeros = 0
    /// The installed path of the file whose data is passing, if it is a file's.
    private var current: BundlePath?
    private var abandoned = false

    init(keptByteLimit: Int = defaultKeptByteLimit) {
        self.keptByteLimit = keptByteLimit
    }

    /// The layout of every byte fed so far; `nil` when it was abandoned (too many kept bytes).
    /// The same however the bytes were split when fed.
    var recorded: TarLayout? {
        guard !abandoned else { return nil }
        var copy = self
        copy.placeZeros()
        return copy.layout
    }

    /// Feeds `bytes` to `parser`, which passes its events to `handle`, and records where each
    /// file's data lies in them.
    mutating func feed(
        _ bytes: UnsafeRawBufferPointer,
        to parser: inout TarParser,
        _ handle: (TarParser.Event) throws -> Void
    ) throws {
        var position = 0  // bytes of `bytes` recorded so far
        try parser.feed(bytes) { event in
            try handle(event)
            guard !abandoned else { return }
            switch event {
            case .begin(let entry):
                current = entry.kind == .file ? try ArchivePath.sanitize(entry.path) : nil
            case .content(let data):
                guard let path = current else { return }
                // The parser passes file data as slices of its input; anything else cannot be placed.
                guard let base = data.baseAddress, let start = bytes.baseAddress, base >= start,
                    base + data.count <= start + bytes.count
                else { return abandon() }
                let at = base - start
                keep(UnsafeRawBufferPointer(rebasing: bytes[position..<at]))
                placeZeros()
                appendFile(path, length: Int64(data.count))
                position = at + data.count
            case .end:
                current = nil
            }
        }
        keep(UnsafeRawBufferPointer(rebasing: bytes[position...]))
        layout.size += Int64(bytes.count)
    }

    private mutating func abandon() {
        abandoned = true
        layout.segments = []
    }

    /// Data of `path`, joined to the data before it when that was the same file's (a file's
    /// data arrives in several slices).
    private mutating func appendFile(_ path: BundlePath, length: Int64) {
        if case .file(let last, let before)? = layout.segments.last, last == path {
            layout.segments[layout.segments.count - 1] = .file(path, length: before + length)
        } else {
            layout.segments.append(.file(path, length: length))
        }
    }

    /// Bytes between files' data: long zero runs as counts, the rest as they are.
    private mutating func keep(_ bytes: UnsafeRawBufferPointer) {
        guard !abandoned else { return }
        var index = 0
        while index < bytes.count {
            var end = index
            if bytes[index] == 0 {
                while end < bytes.count, bytes[end] == 0 { end += 1 }
                pendingZeros += end - index
            } else {
                while end < bytes.count, bytes[end] != 0 { end += 1 }
                placeZeros()
                append(.bytes(Array(bytes[index..<end])))
            }
            index = end
        }
        if keptBytes > keptByteLimit { abandon() }
    }

    /// Places the pending zeros: a long run as a count, a short one among the bytes.
    private mutating func placeZeros() {
        guard pendingZeros > 0 else { return }
        let zeros = pendingZeros
        pendingZeros = 0
        append(zeros >= Self.shortestZeroRun ? .zeros(Int64(zeros)) : .bytes([UInt8](repeating: 0, count: zeros)))
    }

    /// Appends a segment, merged into the last one when both are bytes or both zeros.
    private mutating func append(_ segment: TarLayout.Segment) {
        let last = layout.segments.count - 1
        switch segment {
        case .bytes(let more) where more.isEmpty:
            return
        case .bytes(let more):
            keptBytes += more.count
            guard last >= 0, case .bytes(var kept) = layout.segments[last] else {
                return layout.segments.append(segment)
            }
            // Appended in place: the segment lets go of its array first, so `kept` is its only
            // owner and grows without a copy. `kept + more` copied all that was kept on every
            // run: quadratic in a trailer of alternating bytes and zeros.
            layout.segments[last] = .zeros(0)
            kept.append(contentsOf: more)
            layout.segments[last] = .bytes(kept)
        case .zeros(let more):
            guard last >= 0, case .zeros(let zeros) = layout.segments[last] else {
                return layout.segments.append(segment)
            }
            layout.segments[last] = .zeros(zeros + more)
        case .file:
            layout.segments.append(segment)
        }
    }
}
