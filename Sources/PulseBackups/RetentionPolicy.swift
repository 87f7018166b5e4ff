import Foundation

/// Which archives to keep, with the semantics of restic's `forget`: `last` keeps the N newest;
/// each period rule walks the archives newest first (by the instant each was made, `Backup`)
/// and keeps the newest archive of each period (hour, day, ISO week, month, year) until it has
/// kept N periods. Periods are in the local time the backup was made in, as its name records it
/// (restic's too are in the snapshot's own zone), so they never move with the `TZ` of the
/// machine that prunes. An archive is kept when any rule keeps it. A count of 0 turns its rule off.
///
/// One difference from restic: a period is counted once. restic counts one each time the period
/// changes from one snapshot to the next, which is the same while periods follow the order the
/// backups were made in; where names of different zones interleave (a journey, a cron job in
/// UTC beside a shell in local time) they go back and forth, and `--keep-daily 7` kept seven
/// backups of three days and removed the other four days' last backups.
public struct RetentionPolicy: Sendable, Equatable {
    public enum Rule: String, Sendable, CaseIterable {
        case last, hourly, daily, weekly, monthly, yearly
    }

    public var last = 0
    public var hourly = 0
    public var daily = 0
    public var weekly = 0
    public var monthly = 0
    public var yearly = 0

    public init(last: Int = 0, hourly: Int = 0, daily: Int = 0, weekly: Int = 0, monthly: Int = 0, yearly: Int = 0) {
        self.last = last
        self.hourly = hourly
        self.daily = daily
        self.weekly = weekly
        self.monthly = monthly
        self.yearly = yearly
    }

    public func count(of rule: Rule) -> Int {
        switch rule {
        case .last: last
        case .hourly: hourly
        case .daily: daily
        case .weekly: weekly
        case .monthly: monthly
        case .yearly: yearly
        }
    }

    /// True when no rule is on: such a policy would keep only the newest, and is refused.
    public var isEmpty: Bool { Rule.allCases.allSatisfy { count(of: $0) <= 0 } }

    /// One archive the plan keeps, and the rules that keep it, in `Rule` order.
    public struct Kept: Sendable, Equatable {
        public let backup: Backup
        public let reasons: [String]
        public var name: BackupName { backup.name }
    }

    public struct Plan: Sendable {
        /// Newest first, those made after now first of all.
        public let kept: [Kept]
        /// Newest first.
        public let removed: [Backup]
        /// The newest archive made by now (kept whatever the rules say), nil when there is none.
        public let newest: BackupName?
        /// Those made after now, newest first: kept, outside the rules (also in `kept`).
        public let future: [Backup]
    }

    /// The reason given for the newest archive when no rule kept it (a policy that is not empty
    /// always keeps it: it is the newest of its every period).
    public static let newestReason = "newest"

    /// The reason given for an archive made after now: a clock set wrong when it was made
    /// (a year ahead, say). It is kept and takes no rule's place: were it the newest, every
    /// backup made after it with the right time would sort older, and `--keep-last 1` would
    /// remove each the night it was made.
    public static let futureReason = "made after now"

    /// How far ahead of now a backup may be dated and still be taken as made by now, in
    /// milliseconds: the clocks of two machines writing to one folder, kept by NTP, differ by
    /// less; a clock an hour out (a zone taken for UTC) is a clock set wrong.
    public static let clockTolerance: Int64 = 5 * 60 * 1000

    /// Applies the policy to `backups`, in any order; those made after `now` (milliseconds
    /// since 1970, give or take `clockTolerance`) are kept, outside the rules.
    public func plan(_ backups: [Backup], now: Int64 = .max) -> Plan {
        let (latest, overflow) = now.addingReportingOverflow(Self.clockTolerance)
        let isFuture = { (backup: Backup) in !overflow && backup.madeAt > latest }
        let future = Backup.newestFirst(backups.filter(isFuture))
        let sorted = Backup.newestFirst(backups.filter { !isFuture($0) })
        var reasons = Array(repeating: [String](), count: sorted.count)
        for rule in Rule.allCases {
            var left = count(of: rule)
            guard left > 0 else { continue }
            var counted: Set<[Int]> = []
            for (index, backup) in sorted.enumerated() where left > 0 {
                if counted.insert(Self.period(of: backup.name, for: rule, index: index)).inserted {
                    reasons[index].append(rule.rawValue)
                    left -= 1
                }
            }
        }
        if !reasons.isEmpty, reasons[0].isEmpty { reasons[0].append(Self.newestReason) }
        var kept = future.map { Kept(backup: $0, reasons: [Self.futureReason]) }
        var removed: [Backup] = []
        for (index, backup) in sorted.enumerated() {
            if reasons[index].isEmpty { removed.append(backup) } else { kept.append(Kept(backup: backup, reasons: reasons[index])) }
        }
        return Plan(kept: kept, removed: removed, newest: sorted.first?.name, future: future)
    }

    /// The ISO 8601 week calendar: weeks start on Monday, and week 1 is the one with the
    /// year's first Thursday (at least 4 of its days in the new year). UTC, so that a name's
    /// date-time is taken as written, never shifted by a zone or its daylight saving time.
    static let isoWeeks: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        calendar.firstWeekday = 2
        calendar.minimumDaysInFirstWeek = 4
        return calendar
    }()

    /// The period `name` falls in for `rule`, as comparable numbers. `last` puts every archive
    /// in its own period (its place in the order).
    static func period(of name: BackupName, for rule: Rule, index: Int) -> [Int] {
        switch rule {
        case .last: return [index]
        case .hourly: return [name.year, name.month, name.day, name.hour]
        case .daily: return [name.year, name.month, name.day]
        case .weekly: return isoWeek(year: name.year, month: name.month, day: name.day)
        case .monthly: return [name.year, name.month]
        case .yearly: return [name.year]
        }
    }

    /// `[yearForWeekOfYear, weekOfYear]` of a calendar day: 2021-01-03 is week 53 of 2020.
    public static func isoWeek(year: Int, month: Int, day: Int) -> [Int] {
        let components = DateComponents(year: year, month: month, day: day, hour: 12)
        guard let date = isoWeeks.date(from: components) else { return [year, month, day] }
        let week = isoWeeks.dateComponents([.yearForWeekOfYear, .weekOfYear], from: date)
        return [week.yearForWeekOfYear ?? year, week.weekOfYear ?? 0]
    }
}
