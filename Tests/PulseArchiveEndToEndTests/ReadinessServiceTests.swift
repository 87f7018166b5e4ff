import Foundation
import Testing
@testable import PulseArchive
@testable import PulseStore
@testable import Readiness
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// Builds stores for readiness.md §14's service fixtures: reference time 2026-03-15 12:00
/// local (Europe/Berlin), master toggle on.
struct ReadinessFixture {
    static let zone = TimeZone(identifier: "Europe/Berlin")!
    static var calendar: LocalCalendar { LocalCalendar(timeZone: zone) }
    static let day0 = LocalCalendar(timeZone: zone).startOfDay(year: 2026, month: 3, day: 15)
    static let now = day0 + 12 * hour
    static let hour: Int64 = 3_600_000
    static let minute: Int64 = 60_000

    var rows: [(ArchiveTable, ArchiveRow)] = []
    var settings: [(String, String)] = []
    private var counter = 0

    static func day(_ offset: Int) -> Int64 { calendar.day(day0, adding: offset) }

    /// A row with `values` set and every other required field given a neutral value.
    mutating func add(_ table: ArchiveTable, _ values: [String: FieldValue]) {
        var row = ArchiveRow(table: table)
        counter += 1
        for (i, field) in table.fields.enumerated() {
            if let value = values[field.name] { row[i] = value; continue }
            guard !field.isOptional else { continue }
            switch field.type {
            case .uuid: row[i] = .string(RowFactory.uuid(counter * 100 + i))
            case .date: row[i] = .date(0)
            case .string: row[i] = .string("")
            case .int: row[i] = .int(0)
            case .double: row[i] = .double(0)
            case .bool: row[i] = .bool(false)
            }
        }
        rows.append((table, row))
    }

    /// A session dated day `offset`, from 23:00 the evening before, 450 min: deep 90, light 320, awake 40.
    @discardableResult
    mutating func night(_ offset: Int, startHour: Int64 = -1, minutes: Int64 = 450) -> String {
        let day = Self.day(offset)
        let id = RowFactory.uuid(900_000 + offset + 500)
        let start = day + startHour * Self.hour
        add(.sleepSessions, ["id": .string(id), "date": .date(day), "startAt": .date(start),
                             "endAt": .date(start + minutes * Self.minute), "totalMinutes": .int(minutes)])
        var cursor: Int64 = 0
        for (stage, length) in [("deep", Int64(90)), ("light", 320), ("awake", 40)] {
            add(.sleepStageBlocks, ["sessionId": .string(id), "startAt": .date(start + cursor * Self.minute),
                                    "startMinute": .int(cursor), "durationMinutes": .int(length), "stageRaw": .string(stage)])
            cursor += length
        }
        return id
    }

    mutating func reading(_ kind: String, _ value: Double, at time: Int64) {
        add(.measurements, ["kindRaw": .string(kind), "value": .double(value), "unit": .string(""), "timestamp": .date(time),
                            "sourceRaw": .string("ring"), "confidenceRaw": .string("known"), "createdAt": .date(time)])
    }

    /// HR readings every 30 min from 23:00 the evening before day `offset`.
    mutating func overnightHeartRate(_ offset: Int, _ values: [Double]) {
        for (i, value) in values.enumerated() { reading("hr", value, at: Self.day(offset) - Self.hour + Int64(i) * 30 * Self.minute) }
    }

    mutating func profile(baseline: Double?) {
        add(.userProfiles, ["unitsRaw": .string("metric"), "preferredGlucoseUnitRaw": .string("mgdl"), "hrZoneModeRaw": .string("auto"),
                            "hrRestingBaseline": baseline.map(FieldValue.double) ?? .null, "createdAt": .date(0), "updatedAt": .date(0)])
    }

    /// A night, HR 58, 56, 55, 57, 59, on day `offset`.
    mutating func scoreableDay(_ offset: Int) {
        night(offset)
        overnightHeartRate(offset, [58, 56, 55, 57, 59])
    }

    mutating func activeMinutes(_ offset: Int, _ minutes: Int64) {
        add(.activityDailies, ["date": .date(Self.day(offset)), "activeMinutes": .int(minutes), "source": .string("ring")])
    }

    mutating func run(_ offset: Int, from start: Int64, to end: Int64, pauseSeconds: Double = 0, status: String = "finished") {
        add(.activitySessions, ["type": .string("run"), "statusRaw": .string(status), "startedAt": .date(Self.day(offset) + start),
                                "endedAt": .date(Self.day(offset) + end), "totalPauseSeconds": .double(pauseSeconds),
                                "vitalsModeRaw": .string("spot")])
    }

    /// Fills a store at `directory` and hands a service over it to `body`.
    func withService<T>(_ directory: String, _ body: (ReadinessService) throws -> T) throws -> T {
        if !FileManager.default.fileExists(atPath: directory + "/pulse.sqlite") {
            _ = try PulseStore.fillEmptyStore(directory) { writer in
                for (table, row) in rows { try writer.add(row, to: table) }
                for (key, value) in settings { try writer.setSetting(key, value) }
            }
        }
        return try PulseStore.withExclusiveAccess(directory, create: false) { store in
            try body(ReadinessService(store: store, timeZone: Self.zone))
        }
    }
}

private func rowCount(_ service: ReadinessService) throws -> Int {
    Int(try service.database.integer(#"SELECT count(*) FROM "readinessDailies""#))
}

@Suite("Readiness over a store: S1–S7, S10–S17, R1–R3")
struct ReadinessServiceTests {
    typealias F = ReadinessFixture

    @Test("S1–S2: the overnight window is the night's span, or 22:00–08:00 without one")
    func windows() throws {
        let dir = TemporaryDirectory()
        var fixture = F()
        fixture.night(0)
        fixture.overnightHeartRate(-5, [58, 56, 55])
        fixture.profile(baseline: 55)
        try fixture.withService(dir.path + "/s") { service throws in
            let night = try #require(try service.night(of: F.day0))
            #expect(service.overnightWindow(of: F.day0, night: night) == (F.day0 - F.hour)...(F.day0 - F.hour + 450 * F.minute))
            let other = F.day(-5)
            #expect(try service.night(of: other) == nil)
            #expect(service.overnightWindow(of: other, night: nil) == (other - 2 * F.hour)...(other + 8 * F.hour))
            #expect(try service.inputs(for: other).restingHeartRate != nil)
        }
    }

    @Test("S3: a daytime reading cannot pass for a resting heart rate")
    func daytimeExcluded() throws {
        let dir = TemporaryDirectory()
        var fixture = F()
        fixture.scoreableDay(0)
        fixture.reading("hr", 40, at: F.day0 + 14 * F.hour)
        fixture.profile(baseline: 55)
        try fixture.withService(dir.path + "/s") { service throws in
            let resting = try #require(try service.inputs(for: F.day0).restingHeartRate)
            #expect(resting > 50 && resting < 60)
        }
    }

    @Test("S4: the HRV baseline comes from prior nights and excludes tonight")
    func hrvBaseline() throws {
        let dir = TemporaryDirectory()
        var fixture = F()
        for night in 1...30 {
            for hourOffset: Int64 in [-1, 0, 1] { fixture.reading("hrv", 50, at: F.day(-night) + hourOffset * F.hour) }
        }
        for hourOffset: Int64 in [-1, 0, 1] { fixture.reading("hrv", 20, at: F.day0 + hourOffset * F.hour) }
        try fixture.withService(dir.path + "/s") { service throws in
            let inputs = try service.inputs(for: F.day0)
            #expect(inputs.hrv == 20)
            let baseline = try #require(inputs.hrvBaseline)
            #expect(baseline.isEstablished && baseline.median == 50)
        }
    }

    @Test("S5: a week's history is not a baseline: baselineLearning, no row")
    func learning() throws {
        let dir = TemporaryDirectory()
        var fixture = F()
        for offset in [0, -1, -2] {
            fixture.night(offset)
            fixture.reading("hrv", 50, at: F.day(offset) - F.hour)
        }
        try fixture.withService(dir.path + "/s") { service throws in
            #expect(try service.refresh(F.day0, now: F.now) == .unavailable(.baselineLearning))
            #expect(try rowCount(service) == 0)
        }
    }

    @Test("S6–S7: refreshing twice keeps one row with the stored breakdown")
    func storedRow() throws {
        let dir = TemporaryDirectory()
        var fixture = F()
        fixture.scoreableDay(0)
        fixture.profile(baseline: 55)
        try fixture.withService(dir.path + "/s") { service throws in
            try service.refresh(F.day0, now: F.now)
            try service.refresh(F.day0, now: F.now + 60_000)
            #expect(try rowCount(service) == 1)
            let row = try #require(try service.storedDay(F.day0))
            #expect(row.algorithmVersion == 2 && row.availablePoints == 55 && abs(row.availablePoints / 100 - 0.55) < 0.0001)
            let contributors = ContributorsJSON.decode(row.contributorsJSON)
            #expect(Set(contributors.map(\.kindRaw)) == ["sleep", "restingHeartRate"])
            #expect(contributors.allSatisfy { !$0.detail.isEmpty })
        }
    }

    @Test("S10: a day that becomes unscoreable loses its row")
    func staleRowRemoved() throws {
        let dir = TemporaryDirectory()
        var fixture = F()
        fixture.night(0)
        fixture.overnightHeartRate(0, [58, 56, 55])
        fixture.profile(baseline: 55)
        try fixture.withService(dir.path + "/s") { service throws in
            guard case .scored = try service.refresh(F.day0, now: F.now) else { Issue.record("not scored"); return }
            try service.database.execute(#"DELETE FROM "sleepSessions"; DELETE FROM "measurements""#)
            #expect(try service.refresh(F.day0, now: F.now + 60_000) == .unavailable(.noSignals))
            #expect(try rowCount(service) == 0)
        }
    }

    @Test("S11: backfill is idempotent")
    func backfillIdempotent() throws {
        let dir = TemporaryDirectory()
        var fixture = F()
        for offset in [0, -1, -3] { fixture.scoreableDay(offset) }
        fixture.profile(baseline: 55)
        try fixture.withService(dir.path + "/s") { service throws in
            let first = try service.backfill(days: 7, anchorDay: F.day0, now: F.now)
            #expect(first.scored == 3 && first.unavailable == 4 && first.kept == 0)
            #expect(try rowCount(service) == 3)
            let second = try service.backfill(days: 7, anchorDay: F.day0, now: F.now + 600_000)
            #expect(second.kept == 3)
            #expect(try rowCount(service) == 3)
            #expect(try service.storedDay(F.day0)?.computedAt == F.now)
        }
    }

    @Test("S12: with the master toggle off a backfill writes nothing, unless explicitly asked")
    func toggle() throws {
        let dir = TemporaryDirectory()
        var fixture = F()
        fixture.scoreableDay(0)
        fixture.profile(baseline: 55)
        fixture.settings = [(ArchiveFormat.readinessPrefsKey, #"{"masterEnabled":false}"#)]
        try fixture.withService(dir.path + "/s") { service throws in
            _ = try service.backfill(days: 7, anchorDay: F.day0, now: F.now)
            #expect(try rowCount(service) == 0)
            _ = try service.backfill(days: 7, anchorDay: F.day0, now: F.now, honoringToggle: false)
            #expect(try rowCount(service) == 1)
        }
    }

    @Test("S13–S16: load minutes are the larger of activity and workouts; the baseline needs 4 of 7 days")
    func load() throws {
        let dir = TemporaryDirectory()
        var fixture = F()
        fixture.activeMinutes(-1, 45)
        fixture.run(-1, from: 9 * F.hour, to: 9 * F.hour + 30 * F.minute)
        fixture.run(-10, from: 9 * F.hour, to: 10 * F.hour, pauseSeconds: 600)
        fixture.run(-10, from: 11 * F.hour, to: 12 * F.hour, status: "cancelled")
        for offset in [-12, -13, -14] { fixture.activeMinutes(offset, 40) }
        try fixture.withService(dir.path + "/a") { service throws in
            #expect(try service.loadMinutes(F.day(-1)) == 45)
            #expect(try service.loadMinutes(F.day(-10)) == 50)
            #expect(try service.loadMinutes(F.day(-2)) == nil)
            #expect(try service.loadBaseline(before: F.day(-11)) == nil)
        }
        fixture.activeMinutes(-15, 40)
        try fixture.withService(dir.path + "/b") { service throws in
            #expect(try service.loadBaseline(before: F.day(-11)) == 40)
        }
        var s16 = F()
        s16.activeMinutes(-1, 300)
        for offset in -6 ... -2 { s16.activeMinutes(offset, 40) }
        try s16.withService(dir.path + "/c") { service throws in
            #expect(try service.loadBaseline(before: F.day(-1)) == 40)
        }
    }

    @Test("S17: the demo data set scores across several bands, each with a breakdown")
    func demo() throws {
        let dir = TemporaryDirectory()
        let result = try CLI.run(["demo", "--store", dir.file("demo"), "--end", "2026-03-15", "--timezone", "Europe/Berlin"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let history = try CLI.run(["readiness", "--store", dir.file("demo"), "--days", "90", "--as-of", "2026-03-15",
                                   "--timezone", "Europe/Berlin", "--json"])
        let days = try #require(history.json["days"] as? [[String: Any]])
        let scored = days.filter { $0["score"] as? Int != nil }
        #expect(scored.count > 5)
        #expect(Set(scored.compactMap { $0["band"] as? String }).count > 1)
        #expect(scored.allSatisfy { (0...100).contains($0["score"] as! Int) && !(($0["contributors"] as? [Any]) ?? []).isEmpty })
        #expect(days.first?["date"] as? String == "2026-03-15" && days.count == 90)
    }

    @Test("R1–R3: a resting-HR baseline needs 20 readings spanning 7 days of the last 30; it is their p10")
    func restingBaseline() throws {
        /// k samples over d days: sample i at now − d days + i × d/k days.
        func samples(_ fixture: inout F, values: [Double], days: Double, endingAt end: Int64) {
            for (i, value) in values.enumerated() {
                fixture.reading("hr", value, at: end - Int64(days * 86_400_000) + Int64(Double(i) * days / Double(values.count) * 86_400_000))
            }
        }
        let dir = TemporaryDirectory()
        var r1 = F(); r1.profile(baseline: nil); samples(&r1, values: Array(repeating: 65, count: 10), days: 10, endingAt: F.now)
        try r1.withService(dir.file("r1")) { service throws in
            #expect(try service.learnedRestingBaseline(endingAt: F.now) == nil)
        }
        var r2 = F(); r2.profile(baseline: nil); samples(&r2, values: Array(repeating: 65, count: 40), days: 2, endingAt: F.now)
        try r2.withService(dir.file("r2")) { service throws in
            #expect(try service.learnedRestingBaseline(endingAt: F.now) == nil)
        }
        var r3 = F(); r3.profile(baseline: nil); samples(&r3, values: (51...80).map(Double.init), days: 10, endingAt: F.now)
        try r3.withService(dir.file("r3")) { service throws in
            let learned = try #require(try service.learnedRestingBaseline(endingAt: F.now))
            #expect(abs(learned - 53.9) <= 0.11)
        }
    }

    @Test("a missing resting-HR baseline is learned once at the backfill's anchor; a restored one is used as is")
    func baselineAtBackfill() throws {
        let dir = TemporaryDirectory()
        var fixture = F()
        fixture.profile(baseline: nil)
        for offset in 0..<20 { fixture.scoreableDay(-offset) }
        try fixture.withService(dir.file("a")) { service throws in
            let report = try service.backfill(days: 7, anchorDay: F.day0, now: F.now)
            #expect(report.learnedRestingBaseline != nil && report.scored == 7)
        }
        var restored = F()
        restored.profile(baseline: -3)
        for offset in 0..<20 { restored.scoreableDay(-offset) }
        try restored.withService(dir.file("b")) { service throws in
            let report = try service.backfill(days: 7, anchorDay: F.day0, now: F.now)
            #expect(report.learnedRestingBaseline == nil)
            #expect(try service.profile()?.restingBaseline == -3)
        }
    }
}
