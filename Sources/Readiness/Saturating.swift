import Foundation

/// Arithmetic for values that come from an archive, which may hold any Int64 or any finite
/// double. Within the ranges the specification's examples live in, every function returns
/// exactly what the plain operator would; beyond them it saturates instead of trapping, so a
/// hostile but well-formed row can never crash a readiness run (docs/readiness.md, "Extreme
/// values in readiness").
public enum Saturating {
    /// The sum of `values`, exact whenever the true sum fits in an Int, else Int.min or
    /// Int.max. Overflows are counted rather than clamped step by step, so the result does
    /// not depend on the order: [Int.max, 1, −1] sums to Int.max, not Int.max − 1.
    public static func sum<S: Sequence>(_ values: S) -> Int where S.Element == Int {
        var partial = 0
        // The true sum is partial + wraps × 2⁶⁴.
        var wraps = 0
        for value in values {
            let (next, overflow) = partial.addingReportingOverflow(value)
            if overflow { wraps += value > 0 ? 1 : -1 }
            partial = next
        }
        if wraps > 0 { return .max }
        if wraps < 0 { return .min }
        return partial
    }

    /// `value` as an Int: exact for every integral double inside Int's range, Int.min or
    /// Int.max beyond it, 0 for NaN. Callers round first.
    public static func int(_ value: Double) -> Int {
        if value.isNaN { return 0 }
        // 2⁶³ is the first double above Int.max; −2⁶³ is Int.min itself.
        if value >= 9_223_372_036_854_775_808.0 { return .max }
        if value < -9_223_372_036_854_775_808.0 { return .min }
        return Int(value)
    }

    /// `value` as an Int64, as `int(_:)` does.
    public static func int64(_ value: Double) -> Int64 { Int64(int(value)) }

    /// a + b, Int64.min or Int64.max when it overflows. For instants: a window an hour past
    /// Int64.max ends at Int64.max.
    public static func add(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }

    /// a − b as a Double: the exact Int64 difference when it fits (the only case the
    /// specification's spans and durations meet), else the difference of the doubles, which
    /// is finite for any two Int64s.
    public static func difference(_ a: Int64, _ b: Int64) -> Double {
        let (difference, overflow) = a.subtractingReportingOverflow(b)
        return overflow ? Double(a) - Double(b) : Double(difference)
    }

    /// The decimal digits of `value` rounded half away from zero, however large: explanation
    /// strings say "round(|dev|) as an integer", and a deviation of 10¹⁹ bpm is written in
    /// full rather than squeezed into an Int. A value that is not finite is written as Swift
    /// writes it ("inf", "nan"); the explanations never pass one.
    public static func integerText(_ value: Double) -> String {
        let rounded = roundHalfAwayFromZero(value)
        guard rounded.isFinite else { return rounded.description }
        if abs(rounded) < 9_223_372_036_854_775_808.0 { return String(Int64(rounded)) }
        // Beyond 2⁶³ every double is an integer, and %.0f prints it exactly.
        return String(format: "%.0f", rounded)
    }
}
