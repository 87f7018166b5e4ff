import Foundation
import Testing
@testable import PulseArchive
@testable import PulseStore
@testable import Readiness
import ReadinessChart
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

private let greatest = Double.greatestFiniteMagnitude
private let floatMax = Double(Float.greatestFiniteMagnitude)
/// round(greatestFiniteMagnitude) written out: 309 digits.
private let greatestDigits = String(format: "%.0f", Double.greatestFiniteMagnitude)

private func established(_ median: Double) -> BaselineStats {
    BaselineStats(mean: median, median: median, standardDeviation: 0, p25: median, p75: median, sampleCount: 40, spanDays: 30)
}

/// Whatever the inputs: no NaN, a score in 0…100, every earned value finite and within its
/// points, every detail non-empty, and a contributors string that is JSON. A morning without a
/// score passes only when the case says which reason it expects (`unavailable`).
private func checkSane(_ outcome: ReadinessOutcome, _ note: String, unavailable expected: UnavailableReason? = nil,
                       sourceLocation: SourceLocation = #_sourceLocation) {
    guard case .scored(let s) = outcome else {
        if case .unavailable(let reason) = outcome {
            #expect(reason == expected, "\(note): unavailable (\(reason.rawValue)), expected \(expected.map { "unavailable (\($0.rawValue))" } ?? "a score")",
                    sourceLocation: sourceLocation)
        }
        return
    }
    #expect(expected == nil, "\(note): scored, expected unavailable (\(expected?.rawValue ?? ""))", sourceLocation: sourceLocation)
    #expect((0...100).contains(s.score) && s.availablePoints.isFinite && s.availablePoints > 0, "\(note)", sourceLocation: sourceLocation)
    for c in s.contributors {
        #expect(c.earned.isFinite && c.earned >= 0 && c.earned <= c.maxPoints && !c.detail.isEmpty, "\(note): \(c)", sourceLocation: sourceLocation)
        #expect(!c.value.isNaN && !(c.deviation?.isNaN ?? false) && !(c.baseline?.isNaN ?? false), "\(note): \(c)", sourceLocation: sourceLocation)
    }
    let json = ContributorsJSON.encode(s.contributors)
    #expect((try? JSONSerialization.jsonObject(with: Data(json.utf8))) is [Any], "\(note): \(json)", sourceLocation: sourceLocation)
}

private func contributor(_ outcome: ReadinessOutcome, _ kind: ContributorKind) -> ReadinessContributor? {
    guard case .scored(let s) = outcome else { return nil }
    return s.contributors.first { $0.kind == kind }
}

@Suite("Readiness maths at the extremes of Int64 and Double")
struct ReadinessExtremeMathsTests {
    @Test("integer sums are exact when the true sum fits, whatever the order, and saturate beyond")
    func sums() {
        #expect(Saturating.sum([Int]()) == 0 && Saturating.sum([90, 320, 40]) == 450)
        #expect(Saturating.sum([Int.max, 1, -1]) == Int.max && Saturating.sum([1, Int.max, -1]) == Int.max)
        #expect(Saturating.sum([Int.max, Int.max]) == Int.max && Saturating.sum([Int.min, -1]) == Int.min)
        #expect(Saturating.sum([Int.max, Int.min]) == -1 && Saturating.sum([Int.min, Int.min, Int.max, Int.max]) == -2)
        #expect(Saturating.sum([Int.max, Int.max, Int.min, Int.min, 5]) == 3)
    }

    @Test("conversions to integers and instants saturate; differences of any two Int64s are finite")
    func conversions() {
        #expect(Saturating.int(greatest) == .max && Saturating.int(-greatest) == .min && Saturating.int(.nan) == 0)
        #expect(Saturating.int(9_223_372_036_854_775_808.0) == .max && Saturating.int(-9_223_372_036_854_775_808.0) == .min)
        #expect(Saturating.int(9_223_372_036_854_774_784.0) == 9_223_372_036_854_774_784)
        #expect(Saturating.int(.leastNonzeroMagnitude) == 0 && Saturating.int(-0.0) == 0 && Saturating.int(42) == 42)
        #expect(Saturating.add(.max, 1) == .max && Saturating.add(.min, -1) == .min && Saturating.add(5, -7) == -2)
        #expect(Saturating.difference(.max, .min) == 18_446_744_073_709_551_615.0 && Saturating.difference(.min, .max) < 0)
        #expect(Saturating.difference(1_772_000_000_123, 1_771_000_000_000) == 1_000_000_123)
    }

    @Test("integers in explanations are written in full, however large")
    func integerText() {
        #expect(Saturating.integerText(2.5) == "3" && Saturating.integerText(-2.5) == "-3" && Saturating.integerText(0.49999999999999994) == "0")
        #expect(Saturating.integerText(1e19) == "10000000000000000000" && Saturating.integerText(9_223_372_036_854_775_808.0) == "9223372036854775808")
        #expect(Saturating.integerText(greatest) == greatestDigits && greatestDigits.count == 309 && greatestDigits.hasPrefix("17976931348623157"))
        #expect(Saturating.integerText(.leastNonzeroMagnitude) == "0" && Saturating.integerText(-.leastNonzeroMagnitude) == "0")
    }

    @Test("sleep score: a night or a stage of Int64.max or Int64.min minutes scores, within 0…100")
    func sleepExtremes() {
        let endless = SleepScore.calculate(totalMinutes: .max, blocks: [])
        #expect(endless.asleepMinutes == .max && endless.score == 0)
        #expect(endless.contributors.first?.detail == "153722867280912930h 07m asleep")

        let deep = SleepScore.calculate(totalMinutes: 480, blocks: [SleepStageBlock(stageRaw: "deep", durationMinutes: .max),
                                                                    SleepStageBlock(stageRaw: "deep", durationMinutes: .max)])
        #expect((0...100).contains(deep.score) && deep.deepPercent == 1_921_535_841_011_411_712 && deep.awakePercent == 0)
        #expect(deep.contributors.first { $0.kind == .deep }?.detail == "1921535841011411712% of the night")
        // The sum is exact whenever it fits: Int64.max, +1, −1 is the same night as Int64.max.
        let exact = SleepScore.calculate(totalMinutes: 480, blocks: [.max, 1, -1].map { SleepStageBlock(stageRaw: "deep", durationMinutes: $0) })
        #expect(exact == SleepScore.calculate(totalMinutes: 480, blocks: [SleepStageBlock(stageRaw: "deep", durationMinutes: .max)]))

        let negative = SleepScore.calculate(totalMinutes: .min, blocks: [SleepStageBlock(stageRaw: "rem", durationMinutes: .min),
                                                                         SleepStageBlock(stageRaw: "rem", durationMinutes: .min),
                                                                         SleepStageBlock(stageRaw: "awake", durationMinutes: .min)])
        #expect(negative.score == 0 && negative.asleepMinutes == 0 && negative.remPercent == nil)
        let tiny = SleepScore.calculate(totalMinutes: 1, blocks: [SleepStageBlock(stageRaw: "awake", durationMinutes: .max)])
        #expect(tiny.awakePercent == .max && tiny.asleepMinutes == 0 && (0...100).contains(tiny.score))

        // The bedtime drift is a double: the largest, a subnormal and NaN.
        let baseline = BedtimeBaseline(medianMinutes: -60, nights: 14)
        func timing(_ drift: Double) -> SleepContributor? {
            SleepScore.calculate(totalMinutes: 480, blocks: [], bedtime: (drift, baseline)).contributors.first { $0.kind == .timing }
        }
        #expect(timing(greatest)?.earned == 0 && timing(greatest)?.detail == "\(greatestDigits) min from your usual bedtime")
        #expect(timing(.leastNonzeroMagnitude)?.earned == 10 && timing(.leastNonzeroMagnitude)?.detail == "In line with your usual bedtime")
        #expect(timing(.nan)?.earned == 0 && timing(.nan)?.detail == "Bedtime drift unknown")
        #expect(BedtimeBaseline.from(bedtimes: [greatest, greatest])?.medianMinutes == .infinity)
    }

    @Test("readiness: huge deviations earn what the curves say and explain themselves in full")
    func evaluatorExtremes() throws {
        let hrv = ReadinessEvaluator.evaluate(ReadinessInputs(hrv: floatMax, hrvBaseline: established(50), sleepScore: 90))
        checkSane(hrv, "HRV at Float.max")
        #expect(contributor(hrv, .hrv)?.earned == 30)
        #expect(contributor(hrv, .hrv)?.detail == "HRV 680564693277057719623408366969033850880% above your baseline")

        // (1.8e308 − 50) / 50 × 100 overflows to +∞ in doubles, as the specification evaluates
        // it: a deviation that is not finite earns 0 and reads "at your baseline" (§3, §5), and
        // JSON has no ∞, so the stored string is the specification's failed encoding, "[]".
        let hrvGreatest = ReadinessEvaluator.evaluate(ReadinessInputs(hrv: greatest, hrvBaseline: established(50), sleepScore: 90))
        checkSane(hrvGreatest, "HRV at greatest")
        #expect(contributor(hrvGreatest, .hrv)?.earned == 0 && contributor(hrvGreatest, .hrv)?.detail == "HRV at your baseline")
        #expect({ if case .scored(let s) = hrvGreatest { ContributorsJSON.encode(s.contributors) } else { nil } }() == "[]", "\(hrvGreatest)")

        let heart = ReadinessEvaluator.evaluate(ReadinessInputs(restingHeartRate: 1e19, restingHeartRateBaseline: 55, sleepScore: 90))
        checkSane(heart, "HR 1e19")
        #expect(contributor(heart, .restingHeartRate)?.earned == 0)
        #expect(contributor(heart, .restingHeartRate)?.detail == "Resting HR 10000000000000000000 bpm above your baseline")

        let hugeBaseline = ReadinessEvaluator.evaluate(ReadinessInputs(restingHeartRate: 55, restingHeartRateBaseline: greatest, sleepScore: 90))
        checkSane(hugeBaseline, "RHR baseline at greatest")
        #expect(contributor(hugeBaseline, .restingHeartRate)?.earned == 25)
        #expect(contributor(hugeBaseline, .restingHeartRate)?.detail == "Resting HR \(greatestDigits) bpm below your baseline")

        let load = ReadinessEvaluator.evaluate(ReadinessInputs(sleepScore: 90, priorDayLoadMinutes: greatest, loadBaselineMinutes: .leastNonzeroMagnitude))
        // A sleep score and the load alone are too little of the night to score.
        checkSane(load, "load ratio overflowing", unavailable: .insufficientCoverage)
        // Negative readings are no signal at all; baselines of 0 are not established.
        let cases: [(String, ReadinessInputs, UnavailableReason?)] = [
            ("negative extremes", ReadinessInputs(hrv: -greatest, hrvBaseline: established(50), restingHeartRate: -greatest,
                                                  restingHeartRateBaseline: -greatest, sleepScore: Int.min, skinTemperature: -greatest,
                                                  skinTemperatureBaseline: established(36), priorDayLoadMinutes: -greatest, loadBaselineMinutes: -greatest), .noSignals),
            ("greatest everywhere", ReadinessInputs(hrv: greatest, hrvBaseline: established(greatest), restingHeartRate: greatest,
                                                    restingHeartRateBaseline: greatest, sleepScore: Int.max, skinTemperature: greatest,
                                                    skinTemperatureBaseline: established(.leastNonzeroMagnitude), priorDayLoadMinutes: greatest,
                                                    loadBaselineMinutes: 1), nil),
            ("subnormals", ReadinessInputs(hrv: .leastNonzeroMagnitude, hrvBaseline: established(.leastNormalMagnitude),
                                           restingHeartRate: .leastNonzeroMagnitude, restingHeartRateBaseline: greatest, sleepScore: 0,
                                           skinTemperature: .leastNonzeroMagnitude, skinTemperatureBaseline: established(greatest),
                                           priorDayLoadMinutes: 0, loadBaselineMinutes: .leastNonzeroMagnitude), nil),
            ("zeros", ReadinessInputs(hrv: 0, hrvBaseline: established(0), restingHeartRate: 0, restingHeartRateBaseline: 0, sleepScore: 0,
                                      skinTemperature: 0, skinTemperatureBaseline: established(0), priorDayLoadMinutes: 0, loadBaselineMinutes: 0), .baselineLearning),
        ]
        for (note, inputs, unavailable) in cases { checkSane(ReadinessEvaluator.evaluate(inputs), note, unavailable: unavailable) }
        let greatestEverywhere = ReadinessEvaluator.evaluate(cases[1].1)
        guard case .scored(let s) = greatestEverywhere else {
            Issue.record("greatest everywhere: \(greatestEverywhere), expected a score")
            return
        }
        #expect(s.score >= 0 && s.missing.isEmpty)
    }

    @Test("baseline statistics and percentiles over Int64-wide spans and the largest doubles")
    func statisticsExtremes() throws {
        let samples: [(timestamp: Int64, value: Double)] = [(.min, greatest), (.max, greatest), (0, -greatest)]
        let stats = try #require(BaselineStats.compute(samples))
        #expect(stats.median == greatest && stats.spanDays == 18_446_744_073_709_551_615.0 / 86_400_000 && stats.sampleCount == 2)
        // Σ overflows as the specification sums it; readiness uses only the median.
        #expect(stats.mean == .infinity && !stats.standardDeviation.isNaN)
        #expect(Percentile.interpolated([-greatest, greatest], 0.5) == 0)
        let quarter = Percentile.interpolated([-greatest, greatest], 0.25)
        #expect(quarter > -greatest && quarter < 0)
        #expect(Percentile.interpolated([-greatest, greatest], 0) == -greatest)
        #expect(Percentile.interpolated(Array(51...80).map(Double.init), 0.10) == 53.9)
    }

    @Test("local-day arithmetic at Int64.min and Int64.max")
    func calendarExtremes() {
        let calendar = LocalCalendar(timeZone: TimeZone(identifier: "Europe/Berlin")!)
        for instant in [Int64.min, .min + 1, -1, 0, .max - 1, .max] {
            #expect((0...23).contains(calendar.hour(instant)) && (0...59).contains(calendar.minute(instant)))
            _ = calendar.startOfDay(instant)
            _ = calendar.day(instant, adding: 1)
            _ = calendar.day(instant, adding: -1)
            #expect(!calendar.dayString(instant).isEmpty)
        }
        // 1970-01-01 00:30 UTC is 01:30 in Berlin; a millisecond before the epoch is 00:59.
        #expect(calendar.hour(1_800_000) == 1 && calendar.minute(1_800_000) == 30)
        #expect(calendar.hour(-1) == 0 && calendar.minute(-1) == 59)
    }

    @Test("the trend chart draws scores outside 0…100 at the edge")
    func chartExtremes() {
        let svg = ReadinessTrendChart.svg([.init(date: "2026-03-14", score: .max, bandRaw: "Primed"),
                                           .init(date: "2026-03-15", score: .min, bandRaw: nil)])
        #expect(svg.contains(#"cy="40.0""#) && svg.contains(#"cy="272.0""#) && svg.contains("9223372036854775807"))
    }
}

@Suite("Readiness over a store holding extreme values, dates included")
struct ReadinessExtremeStoreTests {
    @Test("instants at Int64.min and Int64.max in every date readiness reads: backfill, refresh and history run")
    func extremeInstants() throws {
        let dir = TemporaryDirectory()
        var f = ReadinessFixture()
        f.profile(baseline: 55)
        f.rows[0].1[ArchiveTable.userProfiles.fieldIndex("hrRestingBaselineUpdatedAt")!] = .date(.min)
        f.scoreableDay(0)
        f.add(.sleepSessions, ["date": .date(ReadinessFixture.day(-1)), "startAt": .date(.min), "endAt": .date(.max), "totalMinutes": .int(.max)])
        f.add(.sleepSessions, ["date": .date(.max), "startAt": .date(.max), "endAt": .date(.min), "totalMinutes": .int(.min)])
        f.reading("hrv", greatest, at: .min)
        f.reading("hrv", 50, at: .max)
        f.reading("hr", 1e19, at: .max)
        f.add(.activitySessions, ["type": .string("run"), "statusRaw": .string("finished"), "startedAt": .date(.min),
                                  "endedAt": .date(ReadinessFixture.day(-1) + ReadinessFixture.hour), "totalPauseSeconds": .double(-greatest),
                                  "vitalsModeRaw": .string("spot")])
        f.add(.activitySessions, ["type": .string("run"), "statusRaw": .string("finished"), "startedAt": .date(.max),
                                  "endedAt": .date(ReadinessFixture.day(-2)), "totalPauseSeconds": .double(greatest),
                                  "vitalsModeRaw": .string("spot")])
        f.add(.readinessDailies, ["date": .date(ReadinessFixture.day(-3)), "score": .int(.max), "bandRaw": .string("Primed"),
                                  "availablePoints": .double(greatest), "contributorsJSON": .string("[]"), "algorithmVersion": .int(.max),
                                  "computedAt": .date(.min)])
        try f.withService(dir.file("s")) { service in
            let report = try service.backfill(days: 30, anchorDay: ReadinessFixture.day0, now: ReadinessFixture.now)
            #expect(report.scored + report.unavailable == 30 && report.kept == 1)
            let history = try service.history(days: 30, anchorDay: ReadinessFixture.day0)
            #expect(history.count == 30 && history.contains { $0.stored?.score == .max })
            #expect(try service.loadMinutes(ReadinessFixture.day(-1)) == greatest / 60)
            _ = try service.newestDataDay()
            _ = try service.defaultAnchor(now: ReadinessFixture.now)
            _ = try service.backfill(days: 3, anchorDay: Int64.max, now: .max)
            _ = try service.backfill(days: 3, anchorDay: Int64.min, now: .min)
        }
    }
}

/// Archives holding one extreme value each, as `import` reads them today: every command that
/// follows an import must work on the store it leaves.
@Suite("Extreme but well-formed values through the binary: import, readiness, export")
struct ReadinessExtremesCLITests {
    static let zone = ["--timezone", "Europe/Berlin"]
    static let asOf = ["--as-of", "2026-03-15"]

    /// Thirty prior nights of HRV 50 (an established baseline) and a scoreable day 0 (a night,
    /// overnight HR, a profile baseline of 55); `change` adds the extreme value.
    static func archive(heartRate: [Double] = [58, 56, 55, 57, 59], _ change: (inout ReadinessFixture) -> Void = { _ in }) -> InMemoryContent {
        var f = ReadinessFixture()
        f.profile(baseline: 55)
        for night in 1...30 {
            for hour in 0..<3 { f.reading("hrv", 50, at: ReadinessFixture.day(-night) + Int64(hour - 1) * ReadinessFixture.hour) }
        }
        f.night(0)
        f.overnightHeartRate(0, heartRate)
        change(&f)
        var content = InMemoryContent()
        for (table, row) in f.rows { content.rows[table.key, default: []].append(row) }
        return content
    }

    static func tonightHRV(_ f: inout ReadinessFixture, _ values: [Double]) {
        for (i, value) in values.enumerated() { f.reading("hrv", value, at: ReadinessFixture.day0 - ReadinessFixture.hour / 2 + Int64(i) * ReadinessFixture.hour) }
    }

    static func setProfileBaseline(_ f: inout ReadinessFixture, _ value: Double) {
        f.rows[0].1[ArchiveTable.userProfiles.fieldIndex("hrRestingBaseline")!] = .double(value)
    }

    static func block(_ f: inout ReadinessFixture, _ stage: String, _ minutes: Int64) {
        f.add(.sleepStageBlocks, ["sessionId": .string(RowFactory.uuid(900_500)), "startAt": .date(ReadinessFixture.day0 - ReadinessFixture.hour),
                                  "startMinute": .int(0), "durationMinutes": .int(minutes), "stageRaw": .string(stage)])
    }

    static let examples: [(name: String, content: InMemoryContent, detail: String?)] = [
        ("HRV readings at Float.max", archive { tonightHRV(&$0, [floatMax, floatMax, floatMax]) },
         "HRV 680564693277057719623408366969033850880% above your baseline"),
        ("an HRV reading at Double.greatestFiniteMagnitude", archive { tonightHRV(&$0, [greatest]) }, nil),
        ("a heart rate of 1e19", archive(heartRate: [1e19, 1e19, 1e19, 1e19, 1e19]),
         "Resting HR 10000000000000000000 bpm above your baseline"),
        ("a huge resting-HR baseline", archive { setProfileBaseline(&$0, greatest) }, nil),
        ("a night of Int64.max minutes", archive { f in
            f.add(.sleepSessions, ["id": .string(RowFactory.uuid(777)), "date": .date(ReadinessFixture.day0 + ReadinessFixture.hour),
                                   "startAt": .date(ReadinessFixture.day0 - 2 * ReadinessFixture.hour), "endAt": .date(ReadinessFixture.day0),
                                   "totalMinutes": .int(.max)])
        }, nil),
        ("stage blocks of Int64.max minutes", archive { block(&$0, "deep", .max); block(&$0, "deep", .max); block(&$0, "awake", .max) }, nil),
        ("negative extremes and Int64.min", archive { f in
            block(&f, "rem", .min); block(&f, "rem", .min); block(&f, "light", .min)
            tonightHRV(&f, [-greatest, -greatest])
            f.overnightHeartRate(0, [-greatest, -1e19])
            f.activeMinutes(-1, .min)
            f.activeMinutes(-2, .max)
            f.run(-1, from: 0, to: ReadinessFixture.hour, pauseSeconds: -greatest)
            f.add(.sleepSessions, ["date": .date(ReadinessFixture.day(-1)), "startAt": .date(ReadinessFixture.day(-1)),
                                   "endAt": .date(ReadinessFixture.day(-1) + ReadinessFixture.hour), "totalMinutes": .int(.min)])
        }, nil),
    ]

    @Test("import, readiness (text, JSON, SVG) and export all succeed", arguments: 0..<examples.count)
    func extremeValue(_ index: Int) throws {
        let example = Self.examples[index]
        let dir = TemporaryDirectory()
        let archive = dir.file("extreme.json.gz"), store = dir.file("s")
        try writeArchive(example.content, to: archive)

        let imported = try CLI.run(["import", archive, "--store", store, "--json"] + Self.asOf + Self.zone)
        #expect(imported.exitCode == 0, "\(example.name): \(imported.stderr)")
        let readiness = try #require(imported.json["readiness"] as? [String: Any], "\(example.name): \(imported.stdout)")
        #expect((readiness["scored"] as? Int ?? -1) + (readiness["unavailable"] as? Int ?? -1) == 90, "\(example.name)")

        let json = try CLI.run(["readiness", "--store", store, "--json", "--days", "3", "--svg", dir.file("chart.svg")] + Self.asOf + Self.zone)
        #expect(json.exitCode == 0, "\(example.name): \(json.stderr)")
        let days = try #require(json.json["days"] as? [[String: Any]], "\(example.name): \(json.stdout)")
        let today = try #require(days.first)
        let score = try #require(today["score"] as? Int, "\(example.name): day 0 has no score: \(today)")
        #expect((0...100).contains(score), "\(example.name)")
        if let detail = example.detail {
            let details = (today["contributors"] as? [[String: Any]] ?? []).compactMap { $0["detail"] as? String }
            #expect(details.contains(detail), "\(example.name): \(details)")
        }
        #expect(!json.stdout.contains("nan") && !json.stdout.contains("inf"), "\(example.name)")
        #expect(FileManager.default.fileExists(atPath: dir.file("chart.svg")))

        // Every stored breakdown is JSON (a non-finite deviation is stored as the specification's "[]").
        let rows = try StoreSnapshot(store: store).rows[ArchiveTable.readinessDailies.key] ?? []
        let jsonIndex = ArchiveTable.readinessDailies.fieldIndex("contributorsJSON")!
        for row in rows {
            guard case .string(let text) = row[jsonIndex] else { Issue.record("\(example.name): \(row)"); continue }
            #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) is [Any], "\(example.name): \(text)")
        }

        let text = try CLI.run(["readiness", "--store", store, "--days", "3"] + Self.asOf + Self.zone)
        #expect(text.exitCode == 0 && text.stdout.contains("2026-03-15"), "\(example.name): \(text.stderr)")
        let again = try CLI.run(["readiness", "--store", store, "--backfill", "--days", "90"] + Self.asOf + Self.zone)
        #expect(again.exitCode == 0, "\(example.name): \(again.stderr)")

        let exported = try CLI.run(["export", "--store", store, "-o", dir.file("back.json.gz")])
        #expect(exported.exitCode == 0, "\(example.name): \(exported.stderr)")
        let restored = try CLI.run(["import", dir.file("back.json.gz"), "--store", dir.file("r")] + Self.asOf + Self.zone)
        #expect(restored.exitCode == 0, "\(example.name): \(restored.stderr)")
    }
}
