import Foundation

/// Local-day arithmetic in one time zone, on millisecond instants.
///
/// Day arithmetic is calendar arithmetic (a DST day has 23 or 25 hours); zone offsets are
/// cached per hour, because readiness asks for the local hour of thousands of readings.
/// Instants are whatever an archive held, Int64.min and Int64.max included: results outside
/// Int64 saturate, and nothing here traps.
public final class LocalCalendar {
    public let timeZone: TimeZone
    private let calendar: Calendar
    private var offsetByHour: [Int64: Int64] = [:]

    public init(timeZone: TimeZone) {
        self.timeZone = timeZone
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    private func date(_ millis: Int64) -> Date { Date(timeIntervalSince1970: Double(millis) / 1000) }
    private func millis(_ date: Date) -> Int64 { Saturating.int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// Local midnight of the day holding `instant`.
    public func startOfDay(_ instant: Int64) -> Int64 {
        millis(calendar.startOfDay(for: date(instant)))
    }

    /// The start of the day `days` calendar days after the day starting at `dayStart`.
    ///
    /// Counted from the day's noon, then back to that day's start: where a DST change skips
    /// midnight (America/Santiago, 2026-09-06, which starts at 01:00), a day's start is not
    /// 00:00, and days added to 01:00 kept 01:00, inside the next day: the backfill took the
    /// next day's score for that day's and wrote none for it (89 rows for 90 days).
    public func day(_ dayStart: Int64, adding days: Int) -> Int64 {
        guard let moved = calendar.date(byAdding: .day, value: days, to: date(Saturating.add(dayStart, 12 * 3_600_000))) else {
            // Only at the ends of what a Date holds: count 24-hour days instead.
            return Saturating.add(dayStart, Saturating.int64(Double(days) * 86_400_000))
        }
        return millis(calendar.startOfDay(for: moved))
    }

    /// Local start of a calendar date (midnight, or the first instant of a day whose midnight
    /// a DST change skips).
    public func startOfDay(year: Int, month: Int, day: Int) -> Int64 {
        millis(calendar.startOfDay(for: calendar.date(from: DateComponents(year: year, month: month, day: day, hour: 12))!))
    }

    /// The zone's offset from UTC at `instant`, in milliseconds.
    public func offset(at instant: Int64) -> Int64 {
        let hour = instant / 3_600_000 - (instant % 3_600_000 < 0 ? 1 : 0)
        if let cached = offsetByHour[hour] { return cached }
        // In seconds, as a double: the hour's start may lie before Int64.min milliseconds.
        let offset = Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(hour) * 3600))) * 1000
        offsetByHour[hour] = offset
        return offset
    }

    /// The local hour (0–23) of `instant`.
    public func hour(_ instant: Int64) -> Int {
        // Remainders first, so an instant near Int64.max plus the offset cannot overflow.
        let msOfDay = (instant % 86_400_000 + offset(at: instant) % 86_400_000 + 2 * 86_400_000) % 86_400_000
        return Int(msOfDay / 3_600_000)
    }

    /// The local minute of the hour (0–59) of `instant`.
    public func minute(_ instant: Int64) -> Int {
        let msOfHour = (instant % 3_600_000 + offset(at: instant) % 3_600_000 + 2 * 3_600_000) % 3_600_000
        return Int(msOfHour / 60_000)
    }

    /// `yyyy-MM-dd` of the local day holding `instant`. Years are counted as archive dates
    /// count them (ISO 8601): the Gregorian calendar's 1 BC is year 0000, 2 BC is -0001.
    public func dayString(_ instant: Int64) -> String {
        let parts = calendar.dateComponents([.era, .year, .month, .day], from: date(instant))
        let year = parts.era == 0 ? 1 - (parts.year ?? 0) : parts.year ?? 0
        return (year < 0 ? "-" : "") + String(format: "%04d-%02d-%02d", abs(year), parts.month ?? 0, parts.day ?? 0)
    }
}
