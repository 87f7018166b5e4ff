import Foundation
import PulseArchive
import Readiness
import PulseSQLite
import PulseSystem

/// What a backfill did.
public struct BackfillReport: Sendable, Equatable {
    /// The window's last day (local midnight, milliseconds).
    public var anchorDay: Int64
    public var days: Int
    /// Days of the window that have a score: computed now, or kept at the current version.
    public var scored: Int
    /// Days of the window without a score.
    public var unavailable: Int
    /// Rows kept verbatim because they were already at the current algorithm version.
    public var kept: Int
    /// The resting-HR baseline learned before scoring, when the profile had none.
    public var learnedRestingBaseline: Double?
}

extension ReadinessService {
    /// The row stored for a day: the one with the latest `computedAt` among those dated within it.
    public struct StoredDay: Sendable, Equatable {
        public var rowid: Int64
        public var score: Int
        public var bandRaw: String
        public var availablePoints: Double
        public var contributorsJSON: String
        public var algorithmVersion: Int
        public var computedAt: Int64
        /// The row's `date`: the start of the day in the zone it was computed in, which is not
        /// this day's start when that zone was another.
        public var date: Int64
    }

    /// The day's rows, the day's row first.
    func storedRows(of day: Int64) throws -> [StoredDay] {
        let query = try database.cached(#"SELECT rowid, "score", "bandRaw", "availablePoints", "contributorsJSON", "algorithmVersion", "computedAt", "date" FROM "readinessDailies" WHERE "date" >= ? AND "date" < ? ORDER BY "computedAt" DESC, rowid ASC"#)
        try query.bind([.date(day), .date(calendar.day(day, adding: 1))])
        defer { query.reset() }
        var rows: [StoredDay] = []
        while try query.step() {
            rows.append(StoredDay(rowid: query.int64(at: 0), score: Int(clamping: query.int64(at: 1)), bandRaw: query.text(at: 2),
                                  availablePoints: query.double(at: 3), contributorsJSON: query.text(at: 4),
                                  algorithmVersion: Int(clamping: query.int64(at: 5)), computedAt: query.int64(at: 6), date: query.int64(at: 7)))
        }
        return rows
    }

    public func storedDay(_ day: Int64) throws -> StoredDay? { try storedRows(of: day).first }

    /// Recomputes one day: a scored day's row is updated (keeping its id and createdAt) or
    /// inserted; an unscoreable day loses its rows, so stale scores do not linger.
    @discardableResult
    public func refresh(_ day: Int64, now: Int64) throws -> ReadinessOutcome {
        // A local day starting outside the one date range (data in the first hours of year
        // 0000, in a zone east of UTC) gets no row: an export could not write its date.
        let outcome = ArchiveDate.representable.contains(day) ? try evaluate(day) : .unavailable(.noSignals)
        let rows = try storedRows(of: day)
        let delete = try database.cached(#"DELETE FROM "readinessDailies" WHERE rowid = ?"#)
        switch outcome {
        case .unavailable:
            for row in rows { try delete.run([.int(row.rowid)]) }
        case .scored(let score):
            let values: [FieldValue] = [
                .int(Int64(score.score)), .string(score.band.rawValue), .double(score.availablePoints),
                .string(ContributorsJSON.encode(score.contributors)), .int(Int64(ReadinessConstants.algorithmVersion)), .date(now),
            ]
            if let row = rows.first {
                let update = try database.cached(#"UPDATE "readinessDailies" SET "score" = ?, "bandRaw" = ?, "availablePoints" = ?, "contributorsJSON" = ?, "algorithmVersion" = ?, "computedAt" = ?, "updatedAt" = ?6 WHERE rowid = ?7"#)
                try update.run(values + [.int(row.rowid)])
                for other in rows.dropFirst() { try delete.run([.int(other.rowid)]) }
            } else {
                let insert = try database.cached(#"INSERT INTO "readinessDailies" ("score", "bandRaw", "availablePoints", "contributorsJSON", "algorithmVersion", "computedAt", "createdAt", "updatedAt", "id", "date") VALUES (?, ?, ?, ?, ?, ?6, ?6, ?6, ?, ?)"#)
                try insert.run(values + [.string(UUID().uuidString.uppercased()), .date(day)])
            }
        }
        return outcome
    }

    /// The readiness master toggle of the stored prefs (absent or unreadable: on).
    public func masterEnabled() throws -> Bool {
        let query = try database.cached(#"SELECT "value" FROM "settings" WHERE "key" = ?"#)
        try query.bind([.string(ArchiveFormat.readinessPrefsKey)])
        defer { query.reset() }
        guard try query.step(),
              let prefs = (try? JSONSerialization.jsonObject(with: Data(query.text(at: 0).utf8))) as? [String: Any],
              let enabled = prefs["masterEnabled"] as? Bool
        else { return true }
        return enabled
    }

    /// The newest day with data: a sleep session's day, or the day of an overnight reading
    /// (one day later from 22:00 on). Nil for a store without either.
    public func newestDataDay() throws -> Int64? {
        var newest: Int64?
        let sessions = try database.cached(#"SELECT max("date") FROM "sleepSessions""#)
        try sessions.bind([])
        if try sessions.step(), !sessions.isNull(at: 0) { newest = calendar.startOfDay(sessions.int64(at: 0)) }
        sessions.reset()
        let latest = try database.cached(#"SELECT max("timestamp") FROM "measurements" WHERE "kindRaw" = ?"#)
        for kind in ["hr", "hrv", "temp"] {
            try latest.bind([.string(kind)])
            if try latest.step(), !latest.isNull(at: 0) {
                let t = latest.int64(at: 0)
                var day = calendar.startOfDay(t)
                if calendar.hour(t) >= 22 { day = calendar.day(day, adding: 1) }
                newest = max(newest ?? day, day)
            }
            latest.reset()
        }
        return newest
    }

    /// Recomputes `days` days ending at `anchorDay`, in one transaction. Rows already at the
    /// current version are kept verbatim; older ones are recomputed or removed. When the
    /// profile has no resting-HR baseline, one is learned first (readiness.md §11).
    /// - Parameters:
    ///   - honoringToggle: false for explicit requests (after an import,
    ///     `readiness --backfill`), which run whatever the master toggle says.
    ///   - progress: told the days done and the days in all, after each day (years of history
    ///     take seconds).
    ///   - outcome: what the commit makes permanent, for a command whose result the backfill
    ///     is (`readiness --backfill`): it commits with an interruption held off, and one after
    ///     it says the scores stay (`InterruptCleanup.keeping`). Nil inside another command's
    ///     work (after an import, whose own commit is what an interruption reports).
    public func backfill(days: Int, anchorDay: Int64, now: Int64, honoringToggle: Bool = true, committing outcome: String? = nil,
                         progress: ((_ done: Int, _ total: Int) -> Void)? = nil) throws -> BackfillReport {
        var report = BackfillReport(anchorDay: anchorDay, days: days, scored: 0, unavailable: 0, kept: 0)
        if honoringToggle, try !masterEnabled() { return report }
        let committing = { (commit: () throws -> Void) in
            guard let outcome else { return try commit() }
            try InterruptCleanup.keeping([], committing: outcome, during: commit)
        }
        try database.transaction(committing: committing) {
            report.learnedRestingBaseline = try learnRestingBaselineIfMissing(anchorDay: anchorDay, now: now)
            for offset in 0..<days {
                defer { progress?(offset + 1, days) }
                let day = calendar.day(anchorDay, adding: -offset)
                if let row = try storedDay(day), row.algorithmVersion >= ReadinessConstants.algorithmVersion {
                    report.kept += 1
                    report.scored += 1
                    continue
                }
                switch try refresh(day, now: now) {
                case .scored: report.scored += 1
                case .unavailable: report.unavailable += 1
                }
            }
        }
        return report
    }

    // MARK: - Resting-HR baseline (readiness.md §11)

    /// Readings that establish a resting-HR baseline ending at `end`: the p10 of the positive
    /// `hr` values of the 30 days before, when there are 20 spanning 7 days; else nil. The
    /// baseline is stored and exported, so only finite readings count: JSON has no infinity.
    func learnedRestingBaseline(endingAt end: Int64) throws -> Double? {
        let readings = try samples("hr", in: Saturating.add(end, -30 * 86_400_000)...end)
        let positive = readings.map(\.value).filter { $0 > 0 && $0.isFinite }
        guard let first = readings.last?.timestamp, let last = readings.first?.timestamp else { return nil }
        let span = Saturating.difference(last, first) / 86_400_000
        guard positive.count >= 20, span >= 7 else { return nil }
        return Percentile.interpolated(positive.sorted(), 0.10)
    }

    /// Learns a baseline once, anchored at the end of the backfill's last day, only when the
    /// profile has none: a restored baseline is never re-learned, rounded or replaced.
    func learnRestingBaselineIfMissing(anchorDay: Int64, now: Int64) throws -> Double? {
        guard let profile = try profile(), profile.restingBaseline == nil,
              let learned = try learnedRestingBaseline(endingAt: calendar.day(anchorDay, adding: 1))
        else { return nil }
        try database.cached(#"UPDATE "userProfiles" SET "hrRestingBaseline" = ?, "hrRestingBaselineUpdatedAt" = ?, "updatedAt" = ?2 WHERE rowid = ?"#)
            .run([.double(learned), .date(now), .int(profile.rowid)])
        return learned
    }
}

/// One day of readiness history, as `readiness` shows it.
public struct ReadinessDay: Sendable {
    /// `yyyy-MM-dd`, local.
    public var date: String
    public var dayStart: Int64
    public var stored: ReadinessService.StoredDay?
    /// Why there is no score; `nil` when there is one, or when the day would score but has
    /// not been computed yet (`notComputed` is true then).
    public var reason: UnavailableReason?
    public var notComputed: Bool
    public var contributors: [ContributorsJSON.Stored]
}

extension ReadinessService {
    /// The anchor of a backfill or history without `--as-of`: the newest day with data, never
    /// after today.
    public func defaultAnchor(now: Int64) throws -> Int64 {
        let today = calendar.startOfDay(now)
        return min(today, try newestDataDay() ?? today)
    }

    /// `days` days ending at `anchorDay`, newest first: the stored score, or why there is none.
    public func history(days: Int, anchorDay: Int64) throws -> [ReadinessDay] {
        try (0..<days).map { offset in
            let day = calendar.day(anchorDay, adding: -offset)
            var entry = ReadinessDay(date: calendar.dayString(day), dayStart: day, stored: try storedDay(day),
                                     reason: nil, notComputed: false, contributors: [])
            if let stored = entry.stored {
                entry.contributors = ContributorsJSON.decode(stored.contributorsJSON)
            } else {
                switch try evaluate(day) {
                case .unavailable(let reason): entry.reason = reason
                case .scored: entry.notComputed = true
                }
            }
            return entry
        }
    }
}
