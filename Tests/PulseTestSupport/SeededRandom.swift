import Foundation

/// A random number generator with a seed the test prints, so any draw can be replayed:
/// `PULSE_TEST_SEED=<n>` overrides the seed of every generator made with `fromEnvironment`.
/// SplitMix64: small, fast, and good enough to pick test cases.
struct SeededRandom: RandomNumberGenerator {
    let seed: UInt64
    private var state: UInt64

    init(seed: UInt64) {
        self.seed = seed
        state = seed
    }

    /// The seed from `PULSE_TEST_SEED` when set, else a fresh one; printed either way with
    /// `label`, so that a failure can be replayed.
    static func fromEnvironment(_ label: String) -> SeededRandom {
        let seed = ProcessInfo.processInfo.environment["PULSE_TEST_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("\(label): random seed \(seed) (replay with PULSE_TEST_SEED=\(seed))")
        return SeededRandom(seed: seed)
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
