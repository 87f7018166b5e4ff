import Foundation
import PulseArchive
import PulseSQLite
import PulseSystem

/// Rows of one COLMI table, as the report counts them (§3.9): read = imported + duplicate +
/// overlapping + invalid + unmapped.
public struct ColmiTableCounts: Sendable, Equatable {
    public var read = 0
    public var imported = 0
    public var duplicate = 0
    /// Sleep rows of a night the store holds only part of: not added (the store's night is
    /// never changed), but not a duplicate either (docs/gadgetbridge.md).
    public var overlapping = 0
    public var invalid = 0
    public var unmapped = 0
    public init() {}
}

/// What mapping a database produced, before the store's overlap rule (§3.8) moves some of the
/// imported rows to `duplicate`.
public struct GadgetbridgeMapping: Sendable {
    public var tables: [ColmiTable: ColmiTableCounts] = Dictionary(uniqueKeysWithValues: ColmiTable.allCases.map { ($0, ColmiTableCounts()) })
    /// The COLMI session and stage rows that went into each sleep session id (§3.9: they count
    /// as imported or duplicate with it).
    public var sleepRows: [String: (sessions: Int, stages: Int)] = [:]
    /// Device id (§3.4) of each Colmi ring, by its `DEVICE._id`.
    public var deviceIDs: [Int64: String] = [:]
    public init() {}
}

/// Reads the Colmi tables of a checked database and maps them onto the archive's rows
/// (specification §3.3–3.7), delivered table by table to a visitor: the store stages them as it
/// stages an archive. Deterministic: the same rows give the same ids and values on every run
/// (`now` and the zone aside).
public struct GadgetbridgeMapper {
    /// The first and last instants accepted (§3.5): [2000-01-01, 2100-01-01).
    static let earliest: Int64 = 946_684_800_000
    static let latest: Int64 = 4_102_444_800_000
    /// The namespace of Gadgetbridge ids (§3.4).
    public static let namespace = "BE787C0E-E142-5B53-AEF0-D6366BCC3C95"

    let database: GadgetbridgeDatabase
    let calendar: Calendar
    let now: Int64

    public init(_ database: GadgetbridgeDatabase, timeZone: TimeZone, now: Int64) {
        self.database = database
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
        self.now = now
    }

    private static let namespaceBytes = NameBasedUUID.bytes(ofCanonical: namespace)

    public static func id(_ name: String) -> String { NameBasedUUID.make(namespaceBytes: namespaceBytes, name: name) }

    /// Delivers every mapped row to `visitor`, one table after another.
    public func map<V: ArchiveVisitor>(into visitor: inout V) throws -> GadgetbridgeMapping {
        try database.reading { try mapRows(into: &visitor) }
    }

    private func mapRows<V: ArchiveVisitor>(into visitor: inout V) throws -> GadgetbridgeMapping {
        var mapping = GadgetbridgeMapping()
        try emit(.devices, database.rings.map(deviceRow), into: &visitor)
        for ring in database.rings { mapping.deviceIDs[ring.id] = Self.id("gadgetbridge/device/\(ring.mac)") }
        try visitor.beginTable(.measurements)
        var index = 0
        for kind in MeasurementKind.all where database.presentTables.contains(kind.table) {
            for ring in database.rings {
                try measurements(kind, of: ring, index: &index, counts: &mapping.tables[kind.table]!, into: &visitor)
            }
        }
        try visitor.endTable(.measurements, rowCount: index)
        var sessions: [ArchiveRow] = []
        var blocks: [ArchiveRow] = []
        for ring in database.rings {
            try sleep(of: ring, sessions: &sessions, blocks: &blocks, mapping: &mapping)
        }
        try emit(.sleepSessions, sessions, into: &visitor)
        try emit(.sleepStageBlocks, blocks, into: &visitor)
        var buckets: [ArchiveRow] = []
        var dailies: [String: (date: Int64, steps: Int64, distance: Double)] = [:]
        var taken: Set<Int64> = []
        for ring in database.rings where database.presentTables.contains(.activity) {
            try activity(of: ring, taken: &taken, buckets: &buckets, dailies: &dailies, counts: &mapping.tables[.activity]!)
        }
        try emit(.activityBucketSamples, buckets, into: &visitor)
        try emit(.activityDailies, dailies.sorted { $0.value.date < $1.value.date }.map { day, sums in dailyRow(day: day, date: sums.date, steps: sums.steps, distance: sums.distance) },
                 into: &visitor)
        if database.presentTables.contains(.hrvSummary) {
            for ring in database.rings {
                let rows = Int(try count(.hrvSummary, of: ring))
                mapping.tables[.hrvSummary]!.read += rows
                mapping.tables[.hrvSummary]!.unmapped += rows
            }
        }
        return mapping
    }

    private func emit<V: ArchiveVisitor>(_ table: ArchiveTable, _ rows: [ArchiveRow], into visitor: inout V) throws {
        try visitor.beginTable(table)
        for (index, row) in rows.enumerated() { try visitor.visit(row: row, at: index, of: table) }
        try visitor.endTable(table, rowCount: rows.count)
    }

    private func count(_ table: ColmiTable, of ring: GadgetbridgeDevice) throws -> Int64 {
        let statement = try database.database.prepare("SELECT count(*) FROM \"\(table.rawValue)\" WHERE \"DEVICE_ID\" = ?")
        try statement.bind(int64: ring.id, at: 1)
        _ = try statement.step()
        return statement.int64(at: 0)
    }

    /// A statement over one ring's rows of `table` in `TIMESTAMP` order: column 0 the
    /// timestamp when it is an integer in range (in milliseconds), else NULL; then `columns`.
    private func rows(_ table: ColmiTable, of ring: GadgetbridgeDevice, _ columns: [String]) throws -> SQLiteStatement {
        // Where the kill tests stop an import that is reading (docs/testing.md, "Kill points").
        TestPausePoint.reached("gadgetbridge.table")
        let unit = table.millisecondsPerUnit
        let time = "CASE WHEN typeof(\"TIMESTAMP\") = 'integer' AND \"TIMESTAMP\" >= \(Self.earliest / unit) AND \"TIMESTAMP\" < \(Self.latest / unit) "
            + "THEN \"TIMESTAMP\" * \(unit) END"
        // Rows of one instant (a table without Gadgetbridge's key, a view) ordered by their
        // values too, so that every run keeps the same one of them.
        let tieBreak = (0..<columns.count).map { ", \($0 + 2)" }.joined()
        let statement = try database.database.prepare("SELECT \(time), \(columns.joined(separator: ", ")) FROM \"\(table.rawValue)\" "
            + "WHERE \"DEVICE_ID\" = ? ORDER BY \"TIMESTAMP\"\(tieBreak)")
        try statement.bind(int64: ring.id, at: 1)
        return statement
    }

    /// An SQL expression: the column as a number, or NULL when it is not one.
    private static func number(_ column: String) -> String {
        "CASE WHEN typeof(\"\(column)\") IN ('integer', 'real') THEN \"\(column)\" END"
    }

    /// An SQL expression: the column when it is an integer, else NULL.
    private static func integer(_ column: String) -> String {
        "CASE WHEN typeof(\"\(column)\") = 'integer' THEN \"\(column)\" END"
    }

    // MARK: - Devices (§3.3)

    private func deviceRow(_ ring: GadgetbridgeDevice) -> ArchiveRow {
        let table = ArchiveTable.devices
        var row = ArchiveRow(table: table)
        func set(_ name: String, _ value: FieldValue) { row[table.fieldIndex(name)!] = value }
        let alias = ring.alias?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        set("id", .string(Self.id("gadgetbridge/device/\(ring.mac)")))
        set("name", .string(alias.isEmpty ? ring.name : ring.alias!))
        set("advertisedName", .string(ring.name))
        set("bleAddressHint", .string(ring.mac))
        set("stateRaw", .string("idle"))
        if ring.typeName.hasPrefix("COLMI_") {
            set("wearableModelID", .string(ring.typeName.lowercased().replacingOccurrences(of: "_", with: "-")))
        }
        set("deviceTypeRaw", .string("colmiR02"))
        set("capabilitiesRaw", .string(""))
        set("createdAt", .date(now))
        set("updatedAt", .date(now))
        return row
    }

    // MARK: - Measurements (§3.5)

    /// One COLMI table's mapping onto `measurements`.
    public struct MeasurementKind: Sendable {
        public let table: ColmiTable
        public let kindRaw: String
        let unit: String
        let source: String
        let column: String
        let valid: ClosedRange<Double>

        public static let all = [
            MeasurementKind(table: .heartRate, kindRaw: "hr", unit: "bpm", source: "history", column: "HEART_RATE", valid: 1...254),
            MeasurementKind(table: .spo2, kindRaw: "spo2", unit: "%", source: "history", column: "SPO2", valid: 1...100),
            MeasurementKind(table: .stress, kindRaw: "stress", unit: "", source: "colmi", column: "STRESS", valid: 1...100),
            MeasurementKind(table: .hrvValue, kindRaw: "hrv", unit: "ms", source: "colmi", column: "VALUE", valid: 1...254),
            MeasurementKind(table: .temperature, kindRaw: "temp", unit: "°C", source: "colmi", column: "TEMPERATURE", valid: 20.1...45.5),
        ]
    }

    private func measurements<V: ArchiveVisitor>(_ kind: MeasurementKind, of ring: GadgetbridgeDevice, index: inout Int,
                                                 counts: inout ColmiTableCounts, into visitor: inout V) throws {
        // Integers where the DDL says INTEGER (70.5 bpm did not come from the ring); temperature is REAL.
        let statement = try rows(kind.table, of: ring, [kind.table == .temperature ? Self.number(kind.column) : Self.integer(kind.column)])
        let prefix = "gadgetbridge/\(ring.mac)/measurement/\(kind.kindRaw)/"
        var row = ArchiveRow(table: .measurements)
        row[1] = .string(kind.kindRaw)
        row[3] = .string(kind.unit)
        row[6] = .string("known")
        row[9] = .date(now)
        // The instant of the last reading taken: the rows come in time order, so a second one
        // at that instant (a table without Gadgetbridge's key, a view) is next to it. It would
        // get the same id, and the import refused the whole file as "duplicate entries" that
        // inspect had passed; the first is kept and the second counted as a duplicate, as for
        // activity rows.
        var lastTaken: Int64?
        while try statement.step() {
            counts.read += 1
            guard !statement.isNull(at: 0), !statement.isNull(at: 1) else { counts.invalid += 1; continue }
            let timestamp = statement.int64(at: 0)
            var value = statement.double(at: 1)
            if kind.table == .temperature { value = (value * 10).rounded() / 10 }
            guard value.isFinite, kind.valid.contains(value) else { counts.invalid += 1; continue }
            guard timestamp != lastTaken else { counts.duplicate += 1; continue }
            lastTaken = timestamp
            row[0] = .string(Self.id(prefix + String(timestamp)))
            row[2] = .double(value)
            row[4] = .date(timestamp)
            row[5] = .string(kind.table == .heartRate && timestamp % 60_000 != 0 ? "live" : kind.source)
            try visitor.visit(row: row, at: index, of: .measurements)
            index += 1
            counts.imported += 1
        }
    }

    // MARK: - Sleep (§3.6)

    private struct Block {
        var start: Int64
        var minutes: Int64
        var stage: String
        /// COLMI stage rows merged into it.
        var rows: Int
        /// The COLMI session whose first block this is, counted with the session it goes into.
        var opensSession = false
        var end: Int64 { start + minutes * 60_000 }
    }

    private func sleep(of ring: GadgetbridgeDevice, sessions: inout [ArchiveRow], blocks: inout [ArchiveRow], mapping: inout GadgetbridgeMapping) throws {
        var ringSessions: [(start: Int64, end: Int64)] = []
        if database.presentTables.contains(.sleepSession) {
            let statement = try rows(.sleepSession, of: ring, [Self.integer("WAKEUP_TIME")])
            while try statement.step() {
                mapping.tables[.sleepSession]!.read += 1
                let start = statement.int64(at: 0), end = statement.int64(at: 1)
                guard !statement.isNull(at: 0), !statement.isNull(at: 1), end > start, end - start <= 86_400_000 else {
                    mapping.tables[.sleepSession]!.invalid += 1
                    continue
                }
                ringSessions.append((start, end))
            }
        }
        // Each session's stages, in time order.
        var stagesOf: [[Block]] = Array(repeating: [], count: ringSessions.count)
        if database.presentTables.contains(.sleepStage) {
            let statement = try rows(.sleepStage, of: ring, [Self.integer("DURATION"), Self.integer("STAGE")])
            while try statement.step() {
                mapping.tables[.sleepStage]!.read += 1
                let start = statement.int64(at: 0), minutes = statement.int64(at: 1)
                // A stage must fit its session, and not begin inside the stage before it (the
                // rows are in time order): the ring's stages tile its night. A row that runs past
                // the wake-up or into the next stage is damage, counted, never a night whose
                // stages add up to more than its length.
                guard !statement.isNull(at: 0), !statement.isNull(at: 1), !statement.isNull(at: 2), (1...1440).contains(minutes),
                      let owner = ringSessions.lastIndex(where: { $0.start <= start && start < $0.end }),
                      minutes * 60_000 <= ringSessions[owner].end - start,
                      !(stagesOf[owner].last.map { $0.start < start && start < $0.end } ?? false) else {
                    mapping.tables[.sleepStage]!.invalid += 1
                    continue
                }
                let stage = switch statement.int64(at: 2) { case 2: "light"; case 3: "deep"; case 4: "rem"; case 5: "awake"; default: "unknown" }
                stagesOf[owner].append(Block(start: start, minutes: minutes, stage: stage, rows: 1))
            }
        }
        // Blocks per waking day, a block that continues the previous one's stage merged into it.
        var days: [Int64: [Block]] = [:]
        for (index, stages) in stagesOf.enumerated() {
            guard !stages.isEmpty else { mapping.tables[.sleepSession]!.invalid += 1; continue }
            var merged: [Block] = []
            for block in stages {
                if let last = merged.last, last.end == block.start, last.stage == block.stage {
                    merged[merged.count - 1].minutes += block.minutes
                    merged[merged.count - 1].rows += 1
                } else {
                    merged.append(block)
                }
            }
            merged[0].opensSession = true
            days[wakingDay(ringSessions[index].start), default: []].append(contentsOf: merged)
        }
        var takenStarts: Set<Int64> = []
        for (day, dayBlocks) in days.sorted(by: { $0.key < $1.key }) {
            var parts: [[Block]] = []
            var latestEnd = Int64.min
            for block in dayBlocks.sorted(by: { $0.start < $1.start }) {
                guard takenStarts.insert(block.start).inserted else {
                    mapping.tables[.sleepStage]!.duplicate += block.rows
                    if block.opensSession { mapping.tables[.sleepSession]!.duplicate += 1 }
                    continue
                }
                if parts.isEmpty || block.start - latestEnd >= 3_600_000 { parts.append([]) }
                parts[parts.count - 1].append(block)
                latestEnd = max(latestEnd, block.end)
            }
            for part in parts {
                let start = part[0].start
                let end = part.map(\.end).max()!
                let id = Self.id("gadgetbridge/\(ring.mac)/sleepSession/\(start)")
                sessions.append(ArchiveRow(values: [
                    .string(id), .date(day), .date(start), .date(end), .int((end - start) / 60_000), .null,
                    .date(now), .date(now), .date(now), .null,
                ]))
                for block in part {
                    blocks.append(ArchiveRow(values: [
                        .string(Self.id("gadgetbridge/\(ring.mac)/sleepStageBlock/\(block.start)")), .string(id), .date(block.start),
                        .int((block.start - start) / 60_000), .int(block.minutes), .string(block.stage),
                    ]))
                }
                mapping.sleepRows[id] = (part.filter(\.opensSession).count, part.map(\.rows).reduce(0, +))
            }
        }
    }

    /// Local midnight of the waking day: the start's date, the next one from 19:00 on.
    private func wakingDay(_ start: Int64) -> Int64 {
        let instant = Date(timeIntervalSince1970: Double(start) / 1000)
        let midnight = calendar.startOfDay(for: instant)
        guard calendar.component(.hour, from: instant) >= 19, let next = calendar.date(byAdding: .day, value: 1, to: midnight) else {
            return Int64((midnight.timeIntervalSince1970 * 1000).rounded())
        }
        return Int64((calendar.startOfDay(for: next).timeIntervalSince1970 * 1000).rounded())
    }

    // MARK: - Activity (§3.7)

    /// The valid `STEPS` and `DISTANCE` (m) of one row: the ring sends each quarter-hour's steps
    /// and distance as 16-bit numbers and Gadgetbridge keeps one quarter per hour, so a larger
    /// value did not come from the ring (and unbounded values could overflow a day's sum).
    public static let validActivity: ClosedRange<Int64> = 0...65_535

    private func activity(of ring: GadgetbridgeDevice, taken: inout Set<Int64>, buckets: inout [ArchiveRow],
                          dailies: inout [String: (date: Int64, steps: Int64, distance: Double)], counts: inout ColmiTableCounts) throws {
        let statement = try rows(.activity, of: ring, [Self.integer("STEPS"), Self.number("DISTANCE")])
        var day = LocalDay(start: 0, end: 0, text: "")
        while try statement.step() {
            counts.read += 1
            let steps = statement.int64(at: 1), distance = statement.double(at: 2)
            guard !statement.isNull(at: 0), !statement.isNull(at: 1), !statement.isNull(at: 2),
                  Self.validActivity.contains(steps), distance >= 0, distance <= Double(Self.validActivity.upperBound) else {
                counts.invalid += 1
                continue
            }
            let instant = statement.int64(at: 0)
            guard taken.insert(instant / 1000).inserted else { counts.duplicate += 1; continue }
            // Rows come in time order: one calendar computation per day, not per row.
            if instant < day.start || instant >= day.end { day = localDay(instant) }
            buckets.append(ArchiveRow(values: [
                .int(instant / 1000), .date(day.start), .date(instant), .int(steps), .double(distance), .string("ring_history"), .date(now),
            ]))
            // Bounded per row, so a day's sums cannot overflow; saturating all the same.
            var sums = dailies[day.text] ?? (day.start, 0, 0)
            let total = sums.steps.addingReportingOverflow(steps)
            sums.steps = total.overflow ? Int64.max : total.partialValue
            sums.distance += distance
            dailies[day.text] = sums
            counts.imported += 1
        }
    }

    /// A local day: [start, end) in milliseconds, and its `yyyy-MM-dd`.
    private struct LocalDay {
        let start: Int64
        let end: Int64
        let text: String
    }

    /// The local day of an instant.
    private func localDay(_ milliseconds: Int64) -> LocalDay {
        let instant = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        let parts = calendar.dateComponents([.year, .month, .day], from: instant)
        let midnight = calendar.startOfDay(for: instant)
        let next = calendar.date(byAdding: .day, value: 1, to: midnight).map { calendar.startOfDay(for: $0) } ?? midnight.addingTimeInterval(86_400)
        return LocalDay(start: Int64((midnight.timeIntervalSince1970 * 1000).rounded()), end: Int64((next.timeIntervalSince1970 * 1000).rounded()),
                        text: String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!))
    }

    private func dailyRow(day: String, date: Int64, steps: Int64, distance: Double) -> ArchiveRow {
        ArchiveRow(values: [
            .string(Self.id("gadgetbridge/activityDaily/\(day)")), .date(date), .int(steps), .double(0), .double(distance), .int(0),
            .string("ring_history"), .date(now), .date(now), .date(now), .null,
        ])
    }
}
