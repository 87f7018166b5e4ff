/// The piecewise-linear curves that turn a deviation into points (readiness.md §3, §8).
/// Every formula is evaluated left to right as the specification writes it, so results match
/// the app to the last bit.
public enum BandCurve {
    /// Full points at or above `ideal`, 55 % at `soft`, none at or below `hard`
    /// (ideal > soft > hard); nothing for a non-finite value or disordered knots.
    public static func lowerIsWorse(_ v: Double, ideal: Double, soft: Double, hard: Double, points p: Double) -> Double {
        guard v.isFinite, ideal > soft, soft > hard else { return 0 }
        if v >= ideal { return p }
        if v <= hard { return 0 }
        if v >= soft { return ReadinessConstants.softFraction * p + 0.45 * p * (v - soft) / (ideal - soft) }
        return ReadinessConstants.softFraction * p * (v - hard) / (soft - hard)
    }

    /// The mirror image: full points at or below `ideal` (ideal < soft < hard).
    public static func higherIsWorse(_ v: Double, ideal: Double, soft: Double, hard: Double, points p: Double) -> Double {
        lowerIsWorse(-v, ideal: -ideal, soft: -soft, hard: -hard, points: p)
    }

    /// The sleep score's two-sided band with a 65 % knee.
    public static func twoSided(_ v: Double, idealLow: Double, idealHigh: Double, softLow: Double, softHigh: Double,
                                hardLow: Double, hardHigh: Double, points p: Double) -> Double {
        guard v.isFinite else { return 0 }
        if v >= idealLow && v <= idealHigh { return p }
        if v >= softLow && v < idealLow { return p * (0.65 + 0.35 * (v - softLow) / (idealLow - softLow)) }
        if v > idealHigh && v <= softHigh { return p * (0.65 + 0.35 * (softHigh - v) / (softHigh - idealHigh)) }
        if v < softLow { return 0.65 * p * clamp01((v - hardLow) / (softLow - hardLow)) }
        return 0.65 * p * clamp01((hardHigh - v) / (hardHigh - softHigh))
    }
}
