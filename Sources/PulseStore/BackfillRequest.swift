import Foundation

/// A readiness backfill: `days` days ending at `asOf`, or by default at the newest day with
/// data (never after today), in `timeZone`.
public struct BackfillRequest: Sendable {
    public var days: Int
    public var asOf: DateComponents?
    public var timeZone: TimeZone

    public init(days: Int = 90, asOf: DateComponents? = nil, timeZone: TimeZone = .current) {
        self.days = days
        self.asOf = asOf
        self.timeZone = timeZone
    }

    /// Runs the backfill on `store` regardless of the readiness toggle (it was asked for).
    public func run(on store: PulseStore, now: Int64, progress: ((_ done: Int, _ total: Int) -> Void)? = nil) throws -> BackfillReport {
        let service = ReadinessService(store: store, timeZone: timeZone)
        let anchor: Int64
        if let asOf, let year = asOf.year, let month = asOf.month, let day = asOf.day {
            anchor = service.calendar.startOfDay(year: year, month: month, day: day)
        } else {
            let today = service.calendar.startOfDay(now)
            anchor = min(today, try service.newestDataDay() ?? today)
        }
        return try service.backfill(days: days, anchorDay: anchor, now: now, honoringToggle: false, progress: progress)
    }
}
