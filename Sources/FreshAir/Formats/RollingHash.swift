/// The rolling hash a `ChunkIndex` records for each block: a polynomial over the block's
/// bytes, each byte first mapped through a fixed table of random 64-bit values, modulo 2^64.
///
/// A device slides it over its old copy one byte at a time, at the cost of two
/// multiplications, to find a block of the new file wherever it now sits: after an insertion
/// of any length, not only at multiples of the block size. Its high 32 bits, which mix every
/// byte of the window, are what the index records; a hit is then confirmed by the block's
/// SHA-256, and the assembled file by the whole file's.
struct RollingHash {
    /// Odd, so that multiplying by it loses nothing modulo 2^64.
    static let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// The hash's current value, over the last `window` bytes.
    private(set) var value: UInt64 = 0
    /// `multiplier` to the power `window`: what the byte leaving the window weighed.
    private let leaving: UInt64
    /// ``gear``, read by ``roll(out:in:)`` once per byte searched.
    private let table = Self.gearTable

    /// A hash for windows of `window` bytes; ``start(_:)`` gives it its first window.
    init(window: Int) {
        var power: UInt64 = 1
        var base = Self.multiplier
        var exponent = window
        while exponent > 0 {
            if exponent & 1 == 1 { power &*= base }
            base &*= base
            exponent >>= 1
        }
        leaving = power
    }

    /// The 32 bits an index records for the current window.
    var recorded: UInt32 { UInt32(truncatingIfNeeded: value >> 32) }

    /// Starts over on `bytes`, which must be a whole window.
    mutating func start(_ bytes: UnsafeRawBufferPointer) {
        value = Self.of(bytes)
    }

    /// Slides the window one byte on: `old` leaves it, `new` enters.
    @inline(__always)
    mutating func roll(out old: UInt8, in new: UInt8) {
        value = value &* Self.multiplier &+ table[Int(new)] &- table[Int(old)] &* leaving
    }

    /// The hash of `bytes`: Σ gear(bᵢ)·multiplier^(n−1−i). Four interleaved Horner chains
    /// (over every fourth byte, by multiplier⁴) keep the multiplier busy; a length that is not
    /// a multiple of four (a file's last block) takes one chain.
    static func of(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        gear.withUnsafeBufferPointer { gear in
            let count = bytes.count
            guard count % 4 == 0 else {
                return bytes.reduce(UInt64(0)) { $0 &* multiplier &+ gear[Int($1)] }
            }
            let m2 = multiplier &* multiplier
            let m3 = m2 &* multiplier
            let m4 = m2 &* m2
            var (a, b, c, d): (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            var index = 0
            while index < count {
                a = a &* m4 &+ gear[Int(bytes[index])]
                b = b &* m4 &+ gear[Int(bytes[index + 1])]
                c = c &* m4 &+ gear[Int(bytes[index + 2])]
                d = d &* m4 &+ gear[Int(bytes[index + 3])]
                index += 4
            }
            return a &* m3 &+ b &* m2 &+ c &* multiplier &+ d
        }
    }

    /// 256 pseudo-random values from SplitMix64 seeded with FreshAir's constant; changing
    /// them changes every recorded hash (and needs a new index version).
    static let gear: [UInt64] = {
        var state: UInt64 = 0x4672_6573_6841_6972  // "FreshAir"
        return (0..<256).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }()

    /// ``gear`` in memory of its own, allocated once and never freed, so that an instance can
    /// keep a pointer to it: reading an array costs a bounds check, and a static's a lazy-init
    /// check, on every byte of a search. Written once, before any read.
    private nonisolated(unsafe) static let gearTable: UnsafePointer<UInt64> = {
        let table = UnsafeMutablePointer<UInt64>.allocate(capacity: gear.count)
        table.initialize(from: gear, count: gear.count)
        return UnsafePointer(table)
    }()
}
