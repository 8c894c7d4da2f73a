import Foundation

/// Bytes handed, in order, to a consumer on a thread of its own, so that one pass of work is
/// split across two cores: the sender produces the next bytes (reads, inflates) while the
/// consumer uses the last ones (hashes them, unpacks them into files).
///
/// A few buffers go round: the sender fills one (``send(mark:_:)``, as many times as it
/// takes), the thread hands it to the consumer and gives it back. Only full buffers change
/// hands: a pass of thousands of small pieces would otherwise wake the thread for each, and
/// pay more for the hand-offs than for the work. A thread of its own rather than
/// `BlockingPool`'s: a sender waiting for a buffer must never wait for a pool thread that is
/// itself waiting.
///
/// The first error the consumer throws ends its work: later buffers are given back unused,
/// ``failure`` answers it, and ``settle()`` and ``finish()`` rethrow it.
///
/// One thread sends (``send(mark:_:)``, ``settle()``, then ``finish()`` or ``abandon()``).
///
/// Unchecked `Sendable`: what both threads touch is guarded by `condition`; the buffer being
/// filled belongs to the one sending thread, and `consume` is called by the pipe's thread only.
final class BytePipe: @unchecked Sendable {
    /// Called on the pipe's thread with each full buffer's bytes and the last mark sent into
    /// it (the sender's own count: how much input had been read when these bytes were made).
    typealias Consumer = (UnsafeRawBufferPointer, _ mark: Int64) throws -> Void

    private struct Filled {
        var buffer: [UInt8]
        var count: Int
        var mark: Int64
    }

    // Everything from here to `handOffs` is guarded by `condition`.
    private let condition = NSCondition()
    private var full: [Filled] = []
    private var empty: [[UInt8]]
    /// The consumer is at work on a buffer taken from `full`.
    private var busy = false
    /// No more buffers will come; the thread ends once `full` is empty.
    private var closed = false
    /// Buffers still queued are given back unused (``abandon()``).
    private var discarding = false
    private var ended = false
    private var error: (any Error)?
    private let consume: Consumer
    // The buffer being filled, how much of it is, and its mark: the sending thread's alone.
    private var filling: [UInt8]?
    private var filled = 0
    private var mark: Int64 = 0
    /// Buffers handed to the thread so far (read it from the sending thread).
    private(set) var handOffs = 0

    /// Starts the thread, named `name`, with `buffers` buffers of `bufferSize` bytes.
    init(name: String, buffers: Int = 4, bufferSize: Int = 1 << 20, consume: @escaping Consumer) {
        empty = (0..<buffers).map { _ in [UInt8](repeating: 0, count: bufferSize) }
        self.consume = consume
        let thread = Thread { [self] in consumeUntilClosed() }
        thread.name = name
        thread.start()
    }

    /// Lets `fill` write into the free end of a buffer (never empty; it answers how many bytes
    /// it wrote), to be consumed after everything sent before. A `fill` that throws adds nothing.
    /// Waits while every buffer is full; never throws the consumer's failure (see ``failure``).
    func send(mark: Int64 = 0, _ fill: (UnsafeMutableRawBufferPointer) throws -> Int) rethrows {
        var buffer = filling ?? takeEmpty()
        filling = nil
        let count: Int
        do {
            count = try buffer.withUnsafeMutableBytes { [filled] in
                try fill(UnsafeMutableRawBufferPointer(rebasing: $0[filled...]))
            }
        } catch {
            filling = buffer
            throw error
        }
        filled += count
        self.mark = mark
        if filled == buffer.count {
            queue(buffer)
        } else {
            filling = buffer
        }
    }

    /// Sends all of `bytes`, copied into as many buffers as they take.
    func send(mark: Int64 = 0, copying bytes: UnsafeRawBufferPointer) {
        var sent = 0
        while sent < bytes.count {
            send(mark: mark) { buffer in
                let count = min(buffer.count, bytes.count - sent)
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[sent..<sent + count]))
                sent += count
                return count
            }
        }
    }

    /// The consumer's first error, as soon as it threw.
    var failure: (any Error)? {
        condition.lock()
        defer { condition.unlock() }
        return error
    }

    /// Hands over the part-filled buffer and waits until everything sent so far is consumed;
    /// rethrows the consumer's failure. More may be sent after.
    func settle() throws {
        if let buffer = filling, filled > 0 { queue(buffer) }
        filling = nil
        condition.lock()
        defer { condition.unlock() }
        while (!full.isEmpty || busy) && !ended { condition.wait() }
        if let error { throw error }
    }

    /// Consumes everything sent, ends the thread and rethrows the consumer's failure. Call it,
    /// or ``abandon()``, also when sending stopped on an error, or the thread waits for ever;
    /// later calls do nothing more.
    func finish() throws {
        try? settle()
        close(discarding: false)
        if let failure { throw failure }
    }

    /// Ends the thread without consuming what is still queued; returns once the consumer is
    /// no longer at work, so that nothing it does can follow.
    func abandon() {
        filling = nil
        close(discarding: true)
    }

    private func close(discarding: Bool) {
        condition.lock()
        defer { condition.unlock() }
        closed = true
        self.discarding = self.discarding || discarding
        condition.broadcast()
        while !ended { condition.wait() }
    }

    private func takeEmpty() -> [UInt8] {
        condition.lock()
        defer { condition.unlock() }
        while empty.isEmpty { condition.wait() }
        filled = 0
        return empty.removeLast()
    }

    private func queue(_ buffer: [UInt8]) {
        condition.lock()
        full.append(Filled(buffer: buffer, count: filled, mark: mark))
        condition.broadcast()
        condition.unlock()
        filled = 0
        handOffs += 1
    }

    private func consumeUntilClosed() {
        condition.lock()
        while true {
            while full.isEmpty && !closed { condition.wait() }
            if full.isEmpty || discarding { break }
            let next = full.removeFirst()
            let skip = error != nil
            busy = true
            condition.unlock()
            var thrown: (any Error)?
            if !skip {
                do {
                    try next.buffer.withUnsafeBytes {
                        try consume(UnsafeRawBufferPointer(rebasing: $0[0..<next.count]), next.mark)
                    }
                } catch { thrown = error }
            }
            condition.lock()
            busy = false
            error = error ?? thrown
            empty.append(next.buffer)
            condition.broadcast()
        }
        full.removeAll()
        ended = true
        condition.broadcast()
        condition.unlock()
    }
}
