import Foundation

/// A bedtime baseline: the median bedtime of prior nights, in minutes from midnight.
public struct BedtimeBaseline: Sendable, Equatable {
    public var medianMinutes: Double
    public var nights: Int

    public init(medianMinutes: Double, nights: Int) {
        self.medianMinutes = medianMinutes
        self.nights = nights
    }

    public var isEstablished: Bool { nights >= 7 }

    /// From prior nights' bedtimes (minutes from midnight); nil for none.
    public static func from(bedtimes: [Double]) -> BedtimeBaseline? {
        guard !bedtimes.isEmpty else { return nil }
        let sorted = bedtimes.sorted()
        let n = sorted.count
        let median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
        return BedtimeBaseline(medianMinutes: median, nights: n)
    }

    /// Minutes from midnight of a local time, seconds ignored: 23:00 → −60, 01:00 → +60.
    public static func minutesFromMidnight(hour: Int, minute: Int) -> Double {
        let minutes = hour * 60 + minute
        return Double(minutes > 720 ? minutes - 1440 : minutes)
    }
}
