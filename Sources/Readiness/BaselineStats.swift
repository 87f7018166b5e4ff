/// Summary statistics of a signal's recent history, and whether there is enough of it to
/// compare a night against (readiness.md §6).
public struct BaselineStats: Sendable, Equatable {
    public var mean: Double
    public var median: Double
    public var standardDeviation: Double
    public var p25: Double
    public var p75: Double
    /// Number of positive values the statistics were computed from.
    public var sampleCount: Int
    /// Days from the earliest to the latest sample given, positive or not.
    public var spanDays: Double

    public init(mean: Double, median: Double, standardDeviation: Double, p25: Double, p75: Double, sampleCount: Int, spanDays: Double) {
        self.mean = mean
        self.median = median
        self.standardDeviation = standardDeviation
        self.p25 = p25
        self.p75 = p75
        self.sampleCount = sampleCount
        self.spanDays = spanDays
    }

    /// A week of history and twenty readings: before that a deviation would be noise.
    public var isEstablished: Bool { spanDays >= 7 && sampleCount >= 20 }

    /// Statistics of the positive values among `samples`; nil with fewer than two.
    /// - Parameter samples: (timestamp in milliseconds, value). Non-positive values are left
    ///   out of the statistics but still count towards `spanDays`.
    public static func compute(_ samples: [(timestamp: Int64, value: Double)]) -> BaselineStats? {
        let values = samples.map(\.value).filter { $0 > 0 && $0.isFinite }.sorted()
        guard values.count >= 2 else { return nil }
        let n = Double(values.count)
        let mean = values.reduce(0, +) / n
        let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / n
        let times = samples.map(\.timestamp)
        let span = Saturating.difference(times.max()!, times.min()!) / 86_400_000
        return BaselineStats(
            mean: mean, median: Percentile.interpolated(values, 0.5), standardDeviation: variance.squareRoot(),
            p25: Percentile.interpolated(values, 0.25), p75: Percentile.interpolated(values, 0.75),
            sampleCount: values.count, spanDays: span)
    }
}

