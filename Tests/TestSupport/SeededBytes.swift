public import Foundation

/// Reproducible pseudo-random bytes, so a test can publish and later recognise a version's
/// content without keeping it; ``random(_:)`` for content that only has to differ.
///
/// Made a word at a time: a closure per byte (`Data((0..<n).map { _ in UInt8.random(…) })`)
/// costs tens of nanoseconds in a debug build, and the suite made tens of megabytes that way,
/// on the two threads whose queue every other test's tasks wait in.
public struct SeededBytes {
    private var generator: SeededGenerator

    public init(seed: UInt64) { generator = SeededGenerator(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ 1) }

    public mutating func next() -> UInt64 { generator.next() }

    /// The next `count` bytes of the stream: whole words, the last one cut to fit.
    public mutating func bytes(_ count: Int) -> Data {
        var data = Data(count: count)
        data.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset + 8 <= count {
                buffer.storeBytes(of: next().littleEndian, toByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            if offset < count {
                withUnsafeBytes(of: next().littleEndian) { word in
                    buffer.baseAddress!.advanced(by: offset).copyMemory(
                        from: word.baseAddress!,
                        byteCount: count - offset
                    )
                }
            }
        }
        return data
    }

    /// The first `count` bytes of this seed's stream.
    public func bytesOnce(_ count: Int) -> Data {
        var copy = self
        return copy.bytes(count)
    }

    /// `count` bytes from a seed of the system's.
    public static func random(_ count: Int) -> Data {
        var system = SystemRandomNumberGenerator()
        return SeededBytes(seed: system.next()).bytesOnce(count)
    }
}
