import Foundation
import PulseArchive
import PulseSystem
import PulseSQLite

/// What the overlap rule (docs/gadgetbridge.md, "Duplicates and overlap") took out of a ring
/// history import before it was applied: the rows the store already held.
public struct RingHistoryOverlap: Sendable, Equatable {
    /// Measurements dropped, by `kindRaw`.
    public var measurements: [String: Int] = [:]
    /// The ids of the sleep sessions that were applied (the others overlapped the store's).
    public var keptSessions: Set<String> = []
    /// Of the sessions not applied, those with a block outside every session of the store: a
    /// night the store holds only part of (the rest came in a later export), which the rule
    /// cannot add without changing the store's night (docs/gadgetbridge.md).
    public var overlappingSessions: Set<String> = []
    /// Activity buckets dropped.
    public var buckets = 0
    /// The ids of the device rows that were applied.
    public var keptDevices: Set<String> = []
    /// Existing `activityDailies` rows whose steps or distance grew.
    public var updatedDailies = 0
    public init() {}
}

extension PulseStore {
    /// Imports ring history that another app recorded (Gadgetbridge), mapped onto the archive's
    /// tables by `deliver`, all or nothing, through the same staging, apply, lock and backfill
    /// as an archive. With `--merge`, rows the store already holds from the ring are dropped
    /// first (the overlap rule), and the daily activity totals of the days that got buckets are
    /// completed: the one change to rows that existed.
    /// - Parameter stamp: the rows' `now` (milliseconds), which the completed daily totals get
    ///   too; `options.now` is the clock's, for the safety backup and the backfill.
    /// - Parameter timeZone: the zone of the local days: a store's daily row is the day's when it
    ///   lies in [midnight, next midnight) there (23 or 25 hours across a DST change).
    /// - Parameter deliver: delivers the rows to the staging visitor, table by table.
    public static func importRingHistory(storeDirectory: String, options: ImportOptions, stamp: Int64, timeZone: TimeZone,
                                         deliver: (inout any ArchiveVisitor) throws -> Void) throws -> (ImportResult, RingHistoryOverlap) {
        var overlap = RingHistoryOverlap()
        let result = try importing(into: storeDirectory, options: options) { store, didCommit in
            let wasEmpty = try store.isEmpty()
            if !wasEmpty && options.mode == nil {
                throw StoreError(.storeNotEmpty, "the store \(store.directory) already holds data")
            }
            let staging = try StagingArea(directory: store.directory + "/.staging-\(getpid())")
            try staging.stage { visitor in
                var erased: any ArchiveVisitor = visitor
                try deliver(&erased)
            }
            TestPausePoint.reached("import.staged")
            let mode = options.mode ?? .replace
            var backupPath: String?
            let merging = !wasEmpty && mode == .merge
            if merging { overlap = try store.dropOverlap(staging, timeZone: timeZone) }
            overlap.keptSessions = try staging.strings(#"SELECT "id" FROM "sleepSessions""#)
            overlap.keptDevices = try staging.strings(#"SELECT "id" FROM "devices""#)
            var summary = ArchiveSummary()
            summary.rowsFound = try staging.rowCounts()
            // A replace gives the store an import into an empty store gives: as an archive
            // without documents would, the history replaces the document tree with an empty one
            // (staging's `archive/`; files that are not documents stay, as they always do).
            summary.hasDocuments = mode == .replace && !wasEmpty
            let inserted = try store.applyStaged(staging, summary: summary, mode: mode, intoEmptyStore: wasEmpty, now: options.now,
                                                 backfillFollows: options.backfill != nil, beforeCommit: {
                if mode == .replace && !wasEmpty { backupPath = try store.writeSafetyBackup(options: options) }
            }, inTransaction: {
                if merging { try store.applyDailyUpdates(now: stamp) }
            }, didCommit: didCommit)
            return ImportResult(mode: wasEmpty ? "new" : mode.rawValue, summary: summary, tables: try store.allCounts(),
                                inserted: inserted, safetyBackupPath: backupPath, warnings: [], readiness: nil)
        }
        return (result, overlap)
    }

    /// Deletes from staging what the store already holds (§3.8), and records in staging's
    /// `dailyUpdates` the existing daily totals the new buckets complete (§3.7).
    private func dropOverlap(_ staging: StagingArea, timeZone: TimeZone) throws -> RingHistoryOverlap {
        var overlap = RingHistoryOverlap()
        try database.attach(staging.databasePath, as: "staging")
        defer { try? database.execute("DETACH DATABASE staging") }
        try writeDayEnds(timeZone: timeZone)
        let before = try kindCounts()
        // A measurement: its id taken, or (whole minutes) one from the ring within ±120 s.
        try database.execute("""
            DELETE FROM staging."measurements" AS s WHERE s."id" IN (SELECT "id" FROM main."measurements")
              OR (s."timestamp" % 60000 = 0 AND EXISTS (SELECT 1 FROM main."measurements" AS m
                  WHERE m."kindRaw" = s."kindRaw" AND m."timestamp" BETWEEN s."timestamp" - 120000 AND s."timestamp" + 120000
                  AND m."sourceRaw" IN ('history', 'colmi', 'ring')))
            """)
        for (kind, count) in try kindCounts() { overlap.measurements[kind] = (before[kind] ?? 0) - count }
        for (kind, count) in before where overlap.measurements[kind] == nil { overlap.measurements[kind] = count }
        // A session: its id or a block's taken, or one of the store's overlaps it (a zero-length
        // one counting as a minute).
        let taken = """
            s."id" IN (SELECT "id" FROM main."sleepSessions")
              OR EXISTS (SELECT 1 FROM staging."sleepStageBlocks" AS b WHERE b."sessionId" = s."id" AND b."id" IN (SELECT "id" FROM main."sleepStageBlocks"))
              OR EXISTS (SELECT 1 FROM main."sleepSessions" AS m WHERE m."startAt" < max(s."endAt", s."startAt" + 60000)
                         AND s."startAt" < max(m."endAt", m."startAt" + 60000))
            """
        overlap.overlappingSessions = try strings("""
            SELECT s."id" FROM staging."sleepSessions" AS s WHERE (\(taken))
              AND EXISTS (SELECT 1 FROM staging."sleepStageBlocks" AS b WHERE b."sessionId" = s."id"
                AND NOT EXISTS (SELECT 1 FROM main."sleepSessions" AS m
                  WHERE m."startAt" <= b."startAt" AND b."startAt" + b."durationMinutes" * 60000 <= max(m."endAt", m."startAt" + 60000)))
            """)
        try database.execute(#"DELETE FROM staging."sleepSessions" AS s WHERE "# + taken)
        try database.execute(#"DELETE FROM staging."sleepStageBlocks" WHERE "sessionId" NOT IN (SELECT "id" FROM staging."sleepSessions")"#)
        // A bucket: the store has one in the hour it stands for.
        try database.execute("""
            DELETE FROM staging."activityBucketSamples" AS s WHERE EXISTS (SELECT 1 FROM main."activityBucketSamples" AS m
              WHERE m."startEpoch" >= s."startEpoch" AND m."startEpoch" < s."startEpoch" + 3600)
            """)
        overlap.buckets = database.changes
        // A device: its id, or the app's own row for the ring (its MAC).
        try database.execute("""
            DELETE FROM staging."devices" AS s WHERE s."id" IN (SELECT "id" FROM main."devices")
              OR EXISTS (SELECT 1 FROM main."devices" AS m WHERE upper(m."bleAddressHint") = upper(s."bleAddressHint")
                         OR upper(m."peripheralIdentifier") = upper(s."bleAddressHint"))
            """)
        // Daily totals: a day without a new bucket keeps what it has; the others are summed over
        // every bucket of the day, the store's and the new ones.
        try database.execute(#"DELETE FROM staging."activityDailies" WHERE "date" NOT IN (SELECT "date" FROM staging."activityBucketSamples")"#)
        try database.execute("""
            CREATE TABLE staging."daySums" AS SELECT "date", sum("steps") AS "steps", sum("distanceMeters") AS "distance" FROM (
              SELECT "date", "steps", "distanceMeters" FROM staging."activityBucketSamples"
              UNION ALL SELECT "date", "steps", "distanceMeters" FROM main."activityBucketSamples"
                WHERE "date" IN (SELECT "date" FROM staging."activityBucketSamples")) GROUP BY "date"
            """)
        try database.execute("""
            CREATE TABLE staging."dailyUpdates" AS SELECT m."id" AS "id", t."steps" AS "steps", t."distance" AS "distance"
              FROM staging."activityDailies" AS d JOIN staging."daySums" AS t ON t."date" = d."date"
              JOIN staging."dayEnds" AS e ON e."date" = d."date"
              JOIN main."activityDailies" AS m ON m."date" >= d."date" AND m."date" < e."end"
              WHERE t."steps" > m."steps" OR t."distance" > m."distanceMeters"
            """)
        try database.execute("""
            DELETE FROM staging."activityDailies" AS d WHERE EXISTS (SELECT 1 FROM main."activityDailies" AS m
              WHERE m."date" >= d."date" AND m."date" < (SELECT "end" FROM staging."dayEnds" AS e WHERE e."date" = d."date"))
            """)
        try database.execute("""
            UPDATE staging."activityDailies" SET
              "steps" = (SELECT "steps" FROM staging."daySums" AS t WHERE t."date" = "activityDailies"."date"),
              "distanceMeters" = (SELECT "distance" FROM staging."daySums" AS t WHERE t."date" = "activityDailies"."date")
            """)
        overlap.updatedDailies = Int(try database.integer(#"SELECT count(*) FROM staging."dailyUpdates""#))
        return overlap
    }

    /// `staging.dayEnds`: each new daily row's next local midnight, by the calendar (SQL only
    /// knows 24-hour days; a spring day has 23 hours, an autumn one 25).
    private func writeDayEnds(timeZone: TimeZone) throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        try database.execute(#"CREATE TABLE staging."dayEnds" ("date" INTEGER PRIMARY KEY, "end" INTEGER NOT NULL)"#)
        let dates = try database.prepare(#"SELECT DISTINCT "date" FROM staging."activityDailies""#)
        let insert = try database.prepare(#"INSERT INTO staging."dayEnds" VALUES (?, ?)"#)
        while try dates.step() {
            let midnight = dates.int64(at: 0)
            let start = Date(timeIntervalSince1970: Double(midnight) / 1000)
            let next = calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: start)).map { calendar.startOfDay(for: $0) }
                ?? start.addingTimeInterval(86_400)
            try insert.bind(int64: midnight, at: 1)
            try insert.bind(int64: Int64((next.timeIntervalSince1970 * 1000).rounded()), at: 2)
            try insert.runToEnd()
            insert.reset()
        }
    }

    private func kindCounts() throws -> [String: Int] {
        let statement = try database.prepare(#"SELECT "kindRaw", count(*) FROM staging."measurements" GROUP BY "kindRaw""#)
        var counts: [String: Int] = [:]
        while try statement.step() { counts[statement.text(at: 0)] = Int(statement.int64(at: 1)) }
        return counts
    }

    /// In the merge's transaction (staging attached): the larger totals `dropOverlap` found.
    private func applyDailyUpdates(now: Int64) throws {
        let statement = try database.prepare("""
            UPDATE main."activityDailies" AS m SET "steps" = max(m."steps", u."steps"), "distanceMeters" = max(m."distanceMeters", u."distance"),
              "updatedAt" = ?, "syncedAt" = ? FROM staging."dailyUpdates" AS u WHERE m."id" = u."id"
            """)
        try statement.bind(int64: now, at: 1)
        try statement.bind(int64: now, at: 2)
        try statement.runToEnd()
    }
}

extension StagingArea {
    func strings(_ sql: String) throws -> Set<String> { try database.strings(sql) }
}

extension PulseStore {
    func strings(_ sql: String) throws -> Set<String> { try database.strings(sql) }
}

extension SQLiteDatabase {
    /// The first column of every row of `sql`.
    func strings(_ sql: String) throws -> Set<String> {
        let statement = try prepare(sql)
        var values: Set<String> = []
        while try statement.step() { values.insert(statement.text(at: 0)) }
        return values
    }
}
