import Foundation
import PulseArchive
import Readiness
import PulseSQLite

/// Readiness over a store: gathers each day's inputs with indexed queries, stores the scores
/// as `readinessDailies` rows, and backfills (readiness.md §7, §9–§11).
///
/// Day boundaries are local days of `timeZone`. Statements are prepared once per service and
/// reused for every day, and a day's load minutes are computed once per run.
public final class ReadinessService {
    public let calendar: LocalCalendar
    let database: SQLiteDatabase
    private var loadCache: [Int64: Double?] = [:]
    private var statements: Statements { Statements(database: database) }

    private static let day: Int64 = 86_400_000

    public init(store: PulseStore, timeZone: TimeZone) {
        self.database = store.database
        self.calendar = LocalCalendar(timeZone: timeZone)
    }

    // MARK: - Inputs

    /// The day's night: the sleep session dated within the day with the most minutes
    /// (ties: earlier start, then smaller id).
    public struct Night: Sendable, Equatable {
        public var id: String
        public var startAt: Int64
        public var endAt: Int64
        public var totalMinutes: Int
    }

    public func night(of day: Int64) throws -> Night? {
        let query = try statements.night
        try query.bind([.date(day), .date(calendar.day(day, adding: 1))])
        defer { query.reset() }
        guard try query.step() else { return nil }
        return Night(id: query.text(at: 0), startAt: query.int64(at: 1), endAt: query.int64(at: 2), totalMinutes: Int(clamping: query.int64(at: 3)))
    }

    /// The night's span, or 22:00 the evening before to 08:00 without a usable night.
    public func overnightWindow(of day: Int64, night: Night?) -> ClosedRange<Int64> {
        if let night, night.endAt > night.startAt { return night.startAt...night.endAt }
        return Saturating.add(day, -2 * 3_600_000)...Saturating.add(day, 8 * 3_600_000)
    }

    /// Positive values of `kind` within the window, newest first (at most 5000 read).
    func overnightValues(_ kind: String, in window: ClosedRange<Int64>) throws -> [Double] {
        try samples(kind, in: window).map(\.value).filter { $0 > 0 }
    }

    /// Readings of `kind` with timestamp in `range`, newest first, at most the fetch limit.
    func samples(_ kind: String, in range: ClosedRange<Int64>) throws -> [(timestamp: Int64, value: Double)] {
        let query = try statements.samples
        try query.bind([.string(kind), .date(range.lowerBound), .date(range.upperBound), .int(Int64(ReadinessConstants.fetchLimit))])
        defer { query.reset() }
        var result: [(Int64, Double)] = []
        while try query.step() { result.append((query.int64(at: 0), query.double(at: 1))) }
        return result
    }

    /// The 30 days before the night begins, kept to overnight hours (22:00–08:00 local).
    func overnightBaseline(_ kind: String, windowStart: Int64) throws -> BaselineStats? {
        let range = Saturating.add(windowStart, -Int64(ReadinessConstants.baselineWindowDays) * Self.day)...windowStart
        let overnight = try samples(kind, in: range).filter { sample in
            let hour = calendar.hour(sample.timestamp)
            return hour >= 22 || hour < 8
        }
        return BaselineStats.compute(overnight)
    }

    /// The profile readiness uses: the earliest created, ties by smaller id.
    struct Profile {
        var rowid: Int64
        var restingBaseline: Double?
    }

    func profile() throws -> Profile? {
        let query = try statements.profile
        try query.bind([])
        defer { query.reset() }
        guard try query.step() else { return nil }
        return Profile(rowid: query.int64(at: 0), restingBaseline: query.isNull(at: 1) ? nil : query.double(at: 1))
    }

    /// Sleep score v2 of a night, from its stage blocks, without a bedtime baseline.
    func sleepScore(of night: Night) throws -> Int {
        let query = try statements.blocks
        try query.bind([.string(night.id)])
        defer { query.reset() }
        var blocks: [SleepStageBlock] = []
        while try query.step() {
            blocks.append(SleepStageBlock(stageRaw: query.text(at: 0), durationMinutes: Int(clamping: query.int64(at: 1))))
        }
        return SleepScore.calculate(totalMinutes: night.totalMinutes, blocks: blocks).score
    }

    /// The larger of the day's active minutes and its finished workouts' minutes; never the sum.
    public func loadMinutes(_ day: Int64) throws -> Double? {
        if let cached = loadCache[day] { return cached }
        let next = calendar.day(day, adding: 1)
        let active = try statements.activeMinutes
        try active.bind([.date(day), .date(next)])
        var activeMinutes: Double?
        if try active.step(), !active.isNull(at: 0) { activeMinutes = max(0, active.double(at: 0)) }
        active.reset()
        let workouts = try statements.workouts
        try workouts.bind([.date(day), .date(next)])
        var workoutMinutes: Double?
        while try workouts.step() {
            let seconds = Saturating.difference(workouts.int64(at: 1), workouts.int64(at: 0)) / 1000 - workouts.double(at: 2)
            workoutMinutes = (workoutMinutes ?? 0) + max(0, seconds) / 60
        }
        workouts.reset()
        let result: Double?
        switch (activeMinutes, workoutMinutes) {
        case let (a?, w?): result = max(a, w)
        case let (a?, nil): result = a
        case let (nil, w?): result = w
        case (nil, nil): result = nil
        }
        loadCache[day] = result
        return result
    }

    /// The mean load of the 7 days before `day`, when at least 4 of them have data.
    public func loadBaseline(before day: Int64) throws -> Double? {
        var values: [Double] = []
        for offset in 1...ReadinessConstants.loadBaselineDays {
            if let minutes = try loadMinutes(calendar.day(day, adding: -offset)) { values.append(minutes) }
        }
        guard values.count >= ReadinessConstants.loadBaselineMinimumDays else { return nil }
        let mean = values.reduce(0, +) / Double(values.count)
        return mean > 0 ? mean : nil
    }

    /// Everything readiness knows about the morning of `day`.
    public func inputs(for day: Int64) throws -> ReadinessInputs {
        let night = try night(of: day)
        let window = overnightWindow(of: day, night: night)
        var inputs = ReadinessInputs()
        let hrv = try overnightValues("hrv", in: window)
        if !hrv.isEmpty {
            inputs.hrv = hrv.reduce(0, +) / Double(hrv.count)
            inputs.hrvBaseline = try overnightBaseline("hrv", windowStart: window.lowerBound)
        }
        let temperature = try overnightValues("temp", in: window)
        if !temperature.isEmpty {
            inputs.skinTemperature = temperature.reduce(0, +) / Double(temperature.count)
            inputs.skinTemperatureBaseline = try overnightBaseline("temp", windowStart: window.lowerBound)
        }
        let heartRate = try overnightValues("hr", in: window)
        if !heartRate.isEmpty {
            inputs.restingHeartRate = Percentile.interpolated(heartRate.sorted(), 0.10)
            inputs.restingHeartRateBaseline = try profile()?.restingBaseline
        }
        if let night, night.totalMinutes > 0 {
            inputs.sleepScore = try sleepScore(of: night)
        }
        let yesterday = calendar.day(day, adding: -1)
        inputs.priorDayLoadMinutes = try loadMinutes(yesterday)
        inputs.loadBaselineMinutes = try loadBaseline(before: yesterday)
        return inputs
    }

    public func evaluate(_ day: Int64) throws -> ReadinessOutcome {
        ReadinessEvaluator.evaluate(try inputs(for: day))
    }

    // MARK: - Prepared statements

    /// The queries readiness runs for every day, each served by an index.
    private struct Statements {
        let database: SQLiteDatabase

        var night: SQLiteStatement { get throws { try database.cached(#"SELECT "id", "startAt", "endAt", "totalMinutes" FROM "sleepSessions" WHERE "date" >= ? AND "date" < ? ORDER BY "totalMinutes" DESC, "startAt" ASC, "id" ASC LIMIT 1"#) } }
        var samples: SQLiteStatement { get throws { try database.cached(#"SELECT "timestamp", "value" FROM "measurements" WHERE "kindRaw" = ? AND "timestamp" >= ? AND "timestamp" <= ? ORDER BY "timestamp" DESC LIMIT ?"#) } }
        var profile: SQLiteStatement { get throws { try database.cached(#"SELECT rowid, "hrRestingBaseline" FROM "userProfiles" ORDER BY "createdAt" ASC, "id" ASC LIMIT 1"#) } }
        var blocks: SQLiteStatement { get throws { try database.cached(#"SELECT "stageRaw", "durationMinutes" FROM "sleepStageBlocks" WHERE "sessionId" = ?"#) } }
        var activeMinutes: SQLiteStatement { get throws { try database.cached(#"SELECT max("activeMinutes") FROM "activityDailies" WHERE "date" >= ? AND "date" < ?"#) } }
        var workouts: SQLiteStatement { get throws { try database.cached(#"SELECT "startedAt", "endedAt", "totalPauseSeconds" FROM "activitySessions" WHERE "statusRaw" = 'finished' AND "endedAt" >= ? AND "endedAt" < ?"#) } }
    }
}
