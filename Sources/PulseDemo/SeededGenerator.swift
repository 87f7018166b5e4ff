import PulseArchive

/// A small, fast, seedable random source (SplitMix64), so that the same seed always gives the
/// same demo data on every platform. Not for anything that needs unpredictability.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform double in `range`.
    public mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + Double(next() >> 11) / Double(1 << 53) * (range.upperBound - range.lowerBound)
    }

    /// A roughly normal value (sum of uniforms), cheap and deterministic.
    public mutating func normal(mean: Double, deviation: Double) -> Double {
        var sum = 0.0
        for _ in 0..<6 { sum += uniform(0...1) }
        return mean + (sum - 3) * deviation / 0.7071
    }

    public mutating func integer(_ range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &self)
    }

    public mutating func chance(_ probability: Double) -> Bool {
        uniform(0...1) < probability
    }

    /// A version-4 UUID in the app's canonical upper-case form.
    public mutating func uuid() -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        let a = next(), b = next()
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: a >> (8 * i))
            bytes[8 + i] = UInt8(truncatingIfNeeded: b >> (8 * i))
        }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        return CanonicalUUID.string(bytes: bytes)
    }
}
