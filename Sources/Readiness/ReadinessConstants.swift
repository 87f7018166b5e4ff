/// The numbers of readiness algorithmVersion 2 (readiness.md §1). Changing any weight, knot or
/// rule requires a new algorithm version, so these are pinned by a test.
public enum ReadinessConstants {
    public static let algorithmVersion = 2
    public static let minAvailablePoints = 50.0
    public static let softFraction = 0.55
    public static let baselineWindowDays = 30
    public static let loadBaselineDays = 7
    public static let loadBaselineMinimumDays = 4
    /// Rows read per query.
    public static let fetchLimit = 5000
    /// Days recomputed after an import.
    public static let importBackfillDays = 90
}

/// Rounding as the specification means it: half away from zero, exactly.
@inlinable
public func roundHalfAwayFromZero(_ value: Double) -> Double {
    value.rounded(.toNearestOrAwayFromZero)
}

@inlinable
func clamp01(_ value: Double) -> Double {
    min(1, max(0, value))
}
