import Foundation

/// The interpolated percentile used throughout: rank r = f × (n − 1) between the neighbours.
public enum Percentile {
    /// - Parameters:
    ///   - sorted: values in ascending order, at least one.
    ///   - fraction: 0…1 (0.10 gives "p10").
    public static func interpolated(_ sorted: [Double], _ fraction: Double) -> Double {
        precondition(!sorted.isEmpty, "a percentile of no values")
        let rank = fraction * Double(sorted.count - 1)
        let low = Int(rank.rounded(.down)), high = Int(rank.rounded(.up))
        let gap = sorted[high] - sorted[low]
        if gap.isFinite || !sorted[low].isFinite || !sorted[high].isFinite {
            return sorted[low] + (rank - Double(low)) * gap
        }
        // −1e308 and 1e308 are 2e308 apart, more than a double holds: weigh the neighbours
        // instead, which stays between them.
        let weight = rank - Double(low)
        return (1 - weight) * sorted[low] + weight * sorted[high]
    }
}
