import Foundation

/// Random numbers a failure can replay: SplitMix64 from a seed that every random test puts in
/// its failure messages. The seed is fresh each run, or `FRESHAIR_TEST_SEED` to replay one.
public struct SeededGenerator: RandomNumberGenerator, CustomStringConvertible {
    public let seed: UInt64
    private var state: UInt64

    public init(seed: UInt64? = nil) {
        let replayed = ProcessInfo.processInfo.environment["FRESHAIR_TEST_SEED"].flatMap { UInt64($0) }
        self.seed = seed ?? replayed ?? UInt64.random(in: .min ... .max)
        state = self.seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// What a failure message names: the seed, and how to run with it again.
    public var description: String { "seed \(seed) (FRESHAIR_TEST_SEED=\(seed) replays it)" }
}
