import Foundation
import Testing
@testable import Readiness

/// readiness.md §14's evaluation fixtures.
private func baseline(_ m: Double, established: Bool = true) -> BaselineStats {
    BaselineStats(mean: m, median: m, standardDeviation: 0.1 * m, p25: 0.9 * m, p75: 1.1 * m,
                  sampleCount: established ? 40 : 5, spanDays: established ? 30 : 3)
}

private func scored(_ inputs: ReadinessInputs, sourceLocation: SourceLocation = #_sourceLocation) throws -> ReadinessScore {
    guard case .scored(let score) = ReadinessEvaluator.evaluate(inputs) else {
        Issue.record("expected a score for \(inputs)", sourceLocation: sourceLocation)
        throw CancellationError()
    }
    return score
}

private func earned(_ score: ReadinessScore, _ kind: ContributorKind) -> Double? {
    score.contributors.first { $0.kind == kind }?.earned
}

private func hrvInputs(_ percent: Double) -> ReadinessInputs {
    ReadinessInputs(hrv: 50 * (1 + percent / 100), hrvBaseline: baseline(50), sleepScore: 88)
}

@Suite("Readiness score: the acceptance scenarios of readiness.md §14")
struct ReadinessScoreTests {
    @Test("E1: everything at baseline scores 100, Primed, full coverage")
    func e1() throws {
        let s = try scored(ReadinessInputs(hrv: 50, hrvBaseline: baseline(50), restingHeartRate: 55, restingHeartRateBaseline: 55,
                                           sleepScore: 90, skinTemperature: 36.1, skinTemperatureBaseline: baseline(36.0),
                                           priorDayLoadMinutes: 45, loadBaselineMinutes: 45))
        #expect(s.score == 100 && s.band == .primed && s.availablePoints == 100 && s.coverage == 1.0)
        #expect(s.missing.isEmpty && s.contributors.count == 5)
    }

    @Test("E2–E3: missing signals leave the denominator")
    func e2e3() throws {
        let e2 = try scored(ReadinessInputs(restingHeartRate: 55, restingHeartRateBaseline: 55, sleepScore: 90))
        #expect(e2.score == 100 && e2.availablePoints == 55 && abs(e2.coverage - 0.55) < 0.0001 && e2.missing.contains(.hrv))
        let e3 = try scored(ReadinessInputs(hrv: 30, hrvBaseline: baseline(50), restingHeartRate: 55, restingHeartRateBaseline: 55, sleepScore: 90))
        #expect(e3.score < e2.score && e3.availablePoints == 85)
    }

    @Test("E4–E8: the unavailable reasons")
    func unavailable() {
        #expect(ReadinessEvaluator.evaluate(ReadinessInputs(sleepScore: 90)) == .unavailable(.insufficientCoverage))
        #expect(ReadinessEvaluator.evaluate(ReadinessInputs()) == .unavailable(.noSignals))
        #expect(ReadinessEvaluator.evaluate(ReadinessInputs(restingHeartRate: 55, restingHeartRateBaseline: 55, skinTemperature: 36,
                                                            skinTemperatureBaseline: baseline(36), priorDayLoadMinutes: 45, loadBaselineMinutes: 45))
                == .unavailable(.insufficientCoverage))
        #expect(ReadinessEvaluator.evaluate(ReadinessInputs(hrv: 50, hrvBaseline: baseline(50, established: false), sleepScore: 90))
                == .unavailable(.baselineLearning))
    }

    @Test("E8: an unestablished HRV baseline counts as missing, not as at baseline")
    func e8() throws {
        let s = try scored(ReadinessInputs(hrv: 50, hrvBaseline: baseline(50, established: false), restingHeartRate: 55,
                                           restingHeartRateBaseline: 55, sleepScore: 90))
        #expect(s.availablePoints == 55 && s.missing.contains(.hrv) && earned(s, .hrv) == nil)
    }

    @Test("E9: HRV knots", arguments: [(0.0, 30.0), (-15, 16.5), (-40, 0), (-60, 0), (40, 30)])
    func e9(percent: Double, expected: Double) throws {
        #expect(abs(try #require(earned(try scored(hrvInputs(percent)), .hrv)) - expected) < 0.001)
    }

    @Test("E10: resting HR knots", arguments: [(0.0, 25.0), (5, 13.75), (12, 0), (-6, 25)])
    func e10(deviation: Double, expected: Double) throws {
        let s = try scored(ReadinessInputs(restingHeartRate: 55 + deviation, restingHeartRateBaseline: 55, sleepScore: 88))
        #expect(abs(try #require(earned(s, .restingHeartRate)) - expected) < 0.001)
    }

    @Test("E11: sleep knots", arguments: [(88, 30.0), (65, 16.5), (30, 0)])
    func e11(sleep: Int, expected: Double) throws {
        let s = try scored(ReadinessInputs(restingHeartRate: 55, restingHeartRateBaseline: 55, sleepScore: sleep))
        #expect(abs(try #require(earned(s, .sleep)) - expected) < 0.001)
    }

    @Test("E12–E13: skin temperature is scored on its absolute deviation")
    func temperature() throws {
        func run(_ deviation: Double) throws -> ReadinessContributor {
            let s = try scored(ReadinessInputs(restingHeartRate: 55, restingHeartRateBaseline: 55, sleepScore: 88,
                                               skinTemperature: 36.0 + deviation, skinTemperatureBaseline: baseline(36.0)))
            return try #require(s.contributors.first { $0.kind == .skinTemperature })
        }
        let above = try run(0.9), below = try run(-0.9)
        #expect(abs(above.earned - below.earned) < 1e-9)
        #expect(above.detail == "Skin temperature 0.9 °C above your baseline")
        #expect(below.detail == "Skin temperature 0.9 °C below your baseline")
        for (deviation, expected) in [(0.2, 10.0), (0.6, 5.5), (1.2, 0.0)] {
            #expect(abs(try run(deviation).earned - expected) < 0.001, "deviation \(deviation)")
        }
    }

    @Test("E14: training-load knots", arguments: [(1.0, 5.0), (1.2, 5), (1.8, 2.75), (3.0, 0), (0.2, 5)])
    func e14(ratio: Double, expected: Double) throws {
        let s = try scored(ReadinessInputs(restingHeartRate: 55, restingHeartRateBaseline: 55, sleepScore: 88,
                                           priorDayLoadMinutes: 40 * ratio, loadBaselineMinutes: 40))
        #expect(abs(try #require(earned(s, .trainingLoad)) - expected) < 0.001)
    }

    @Test("E15: bands")
    func e15() {
        let expected: [(Int, ReadinessBand)] = [(100, .primed), (85, .primed), (84, .ready), (70, .ready), (69, .moderate),
                                                (55, .moderate), (54, .restNeeded), (0, .restNeeded)]
        for (score, band) in expected { #expect(ReadinessBand(score: score) == band, "\(score)") }
    }

    @Test("E16: sweeping HRV from +20 % down to −60 % never raises the score")
    func e16() throws {
        var previous = Int.max
        for percent in stride(from: 20, through: -60, by: -1) {
            let s = try scored(hrvInputs(Double(percent)))
            #expect((0...100).contains(s.score))
            #expect(s.score <= previous, "score rose at \(percent) %")
            previous = s.score
        }
    }

    @Test("E17–E18: ranking by drag, and the missing kinds in canonical order")
    func ranking() throws {
        let s = try scored(ReadinessInputs(hrv: 30, hrvBaseline: baseline(50), restingHeartRate: 57, restingHeartRateBaseline: 55,
                                           sleepScore: 90, skinTemperature: 36, skinTemperatureBaseline: baseline(36),
                                           priorDayLoadMinutes: 45, loadBaselineMinutes: 45))
        #expect(s.contributors.first?.kind == .hrv)
        #expect(zip(s.contributors, s.contributors.dropFirst()).allSatisfy { $0.drag >= $1.drag })
        let e18 = try scored(ReadinessInputs(hrv: 50, hrvBaseline: baseline(50), sleepScore: 90))
        #expect(e18.missing == [.restingHeartRate, .skinTemperature, .trainingLoad])
    }

    @Test("E19–E21: the exact explanation strings")
    func explanations() throws {
        let e19 = try scored(ReadinessInputs(hrv: 44, hrvBaseline: baseline(50), restingHeartRate: 59, restingHeartRateBaseline: 55, sleepScore: 82))
        let details = Set(e19.contributors.map(\.detail))
        #expect(details == ["HRV 12% below your baseline", "Resting HR 4 bpm above your baseline", "Sleep score 82"])
        let e20 = try scored(ReadinessInputs(hrv: 50.1, hrvBaseline: baseline(50), restingHeartRate: 55.1, restingHeartRateBaseline: 55, sleepScore: 88))
        #expect(Set(e20.contributors.map(\.detail)).isSuperset(of: ["HRV at your baseline", "Resting HR at your baseline"]))
        func load(_ ratio: Double) throws -> String {
            let s = try scored(ReadinessInputs(restingHeartRate: 55, restingHeartRateBaseline: 55, sleepScore: 88,
                                               priorDayLoadMinutes: 40 * ratio, loadBaselineMinutes: 40))
            return try #require(s.contributors.first { $0.kind == .trainingLoad }).detail
        }
        #expect(try load(1.0) == "Yesterday's load in your usual range")
        #expect(try load(2.1) == "Yesterday's load 2.1\u{00D7} your usual")
    }

    @Test("E22: a captured sleep score of 0 earns 0, it is not missing")
    func e22() throws {
        let s = try scored(ReadinessInputs(restingHeartRate: 55, restingHeartRateBaseline: 55, sleepScore: 0))
        #expect(s.availablePoints == 55 && earned(s, .sleep) == 0 && !s.missing.contains(.sleep) && s.score == 45)
    }

    @Test("E23: the constants are pinned")
    func e23() {
        #expect(ReadinessConstants.algorithmVersion == 2 && ReadinessConstants.minAvailablePoints == 50 && ReadinessConstants.softFraction == 0.55)
        #expect(ContributorKind.allCases.map(\.maxPoints) == [30, 25, 30, 10, 5])
    }

    @Test("E24: hostile inputs never crash, never produce NaN, stay in range")
    func hostile() {
        let cases: [ReadinessInputs] = [
            ReadinessInputs(hrv: .nan, hrvBaseline: baseline(50), sleepScore: 90),
            ReadinessInputs(hrv: .infinity, hrvBaseline: baseline(50), sleepScore: 90),
            ReadinessInputs(hrv: -10, hrvBaseline: baseline(50), sleepScore: 90),
            ReadinessInputs(hrv: 50, hrvBaseline: baseline(0), sleepScore: 90),
            ReadinessInputs(restingHeartRate: 55, restingHeartRateBaseline: 0, sleepScore: 90),
            ReadinessInputs(sleepScore: 0, priorDayLoadMinutes: 45, loadBaselineMinutes: 0),
            ReadinessInputs(sleepScore: -5),
            ReadinessInputs(hrv: 50, hrvBaseline: baseline(50), sleepScore: 90, skinTemperature: .nan, skinTemperatureBaseline: baseline(36),
                            priorDayLoadMinutes: .infinity, loadBaselineMinutes: 45),
            ReadinessInputs(hrv: 1e308, hrvBaseline: baseline(1e-300), restingHeartRate: -.infinity, restingHeartRateBaseline: .nan,
                            sleepScore: Int.max, priorDayLoadMinutes: 1e308, loadBaselineMinutes: 1e-308),
        ]
        for inputs in cases {
            if case .scored(let s) = ReadinessEvaluator.evaluate(inputs) {
                #expect((0...100).contains(s.score) && s.availablePoints > 0 && !s.availablePoints.isNaN)
                for c in s.contributors {
                    #expect(c.earned.isFinite && c.earned >= 0 && c.earned <= c.maxPoints && !c.detail.isEmpty, "\(inputs)")
                    #expect(!(c.deviation?.isNaN ?? false) && !c.value.isNaN)
                }
            }
        }
    }

    @Test("rounding is half away from zero, exactly")
    func rounding() {
        #expect(roundHalfAwayFromZero(2.5) == 3 && roundHalfAwayFromZero(-2.5) == -3 && roundHalfAwayFromZero(0.49999999999999994) == 0)
    }

    @Test("BaselineStats: positives only, population SD, interpolated percentiles, span over every sample")
    func baselineStats() throws {
        let day: Int64 = 86_400_000
        let samples: [(timestamp: Int64, value: Double)] = [(0, -1), (day, 10), (2 * day, 20), (3 * day, 30), (10 * day, 40)]
        let stats = try #require(BaselineStats.compute(samples))
        #expect(stats.sampleCount == 4 && stats.mean == 25 && stats.median == 25 && stats.spanDays == 10)
        #expect(abs(stats.standardDeviation - 11.180339887) < 1e-6)
        #expect(stats.p25 == 17.5 && stats.p75 == 32.5 && !stats.isEstablished)
        #expect(BaselineStats.compute([(0, 5), (day, 0)]) == nil)
        #expect(Percentile.interpolated(Array(51...80).map(Double.init), 0.10) == 53.9)
    }

    @Test("contributors JSON: keys in order, shortest numbers, sleep without baseline and deviation; tolerant reading")
    func contributorsJSON() throws {
        let s = try scored(ReadinessInputs(hrv: 42.5, hrvBaseline: baseline(50), sleepScore: 90))
        let text = ContributorsJSON.encode(s.contributors)
        #expect(text == #"[{"kindRaw":"hrv","earned":16.5,"maxPoints":30,"value":42.5,"baseline":50,"deviation":-15,"detail":"HRV 15% below your baseline"},{"kindRaw":"sleep","earned":30,"maxPoints":30,"value":90,"detail":"Sleep score 90"}]"#)
        let decoded = ContributorsJSON.decode(text)
        #expect(decoded.map(\.kindRaw) == ["hrv", "sleep"] && decoded[1].baseline == nil && decoded[0].deviation == -15)
        #expect(ContributorsJSON.decode("not json").isEmpty)
        #expect(ContributorsJSON.decode(#"[{"kindRaw":"futureKind","earned":1,"maxPoints":2,"value":3,"extra":true,"detail":"x"}]"#).first?.kindRaw == "futureKind")
    }
}

/// A night given as stage minutes: one block per stage with minutes > 0.
private func night(_ inBed: Int, deep: Int = 0, light: Int = 0, awake: Int = 0, rem: Int = 0,
                   bedtime: (drift: Double, baseline: BedtimeBaseline)? = nil) -> SleepScoreResult {
    let blocks = [("deep", deep), ("light", light), ("awake", awake), ("rem", rem)]
        .filter { $0.1 > 0 }.map { SleepStageBlock(stageRaw: $0.0, durationMinutes: $0.1) }
    return SleepScore.calculate(totalMinutes: inBed, blocks: blocks, bedtime: bedtime)
}

@Suite("Sleep score v2: Z1–Z14")
struct SleepScoreTests {
    let established = BedtimeBaseline(medianMinutes: -60, nights: 14)

    @Test("Z1–Z2: asleep minutes with and without an awake signal")
    func asleep() {
        #expect(night(480, deep: 90, light: 200, awake: 90, rem: 100).asleepMinutes == 390)
        let z2 = night(480, light: 290)
        #expect(z2.asleepMinutes == 480 && z2.awakePercent == nil)
    }

    @Test("Z3, Z4, Z6, Z7: contributors present and coverage")
    func coverage() {
        let z3 = night(480, deep: 90, light: 220, awake: 30, rem: 140, bedtime: (0, established))
        #expect(z3.contributors.map(\.kind) == SleepContributorKind.allCases && z3.coverage == 1.0)
        let z4 = night(480, deep: 90, light: 360, awake: 30, bedtime: (0, established))
        #expect(!z4.contributors.contains { $0.kind == .rem } && z4.coverage == 0.8 && z4.remPercent == nil)
        let z6 = night(480, deep: 90, light: 220, awake: 30, rem: 140, bedtime: (0, BedtimeBaseline(medianMinutes: -60, nights: 6)))
        #expect(!z6.contributors.contains { $0.kind == .timing } && z6.coverage == 0.9)
        #expect(night(480, deep: 90, light: 220, awake: 30, rem: 140).lightPercent == 46)
    }

    @Test("Z5: a ring that cannot see REM is not penalised")
    func z5() {
        let withRem = night(480, deep: 86, light: 268, awake: 22, rem: 104)
        let withoutRem = night(480, deep: 86, light: 372, awake: 22)
        #expect(abs(withRem.score - withoutRem.score) <= 1)
    }

    @Test("Z8–Z9: timing and restfulness knots")
    func knots() {
        for (drift, expected) in [(0.0, 10.0), (30, 10), (60, 5.5), (120, 0), (300, 0)] {
            #expect(abs(SleepScore.timing(drift) - expected) < 1e-9, "drift \(drift)")
        }
        for (awake, expected) in [(10.0, 15.0), (20, 5.25), (35, 0)] {
            #expect(abs(SleepScore.restfulness(awake) - expected) < 1e-9, "awake \(awake)")
        }
    }

    @Test("Z10–Z11: bedtimes in minutes from midnight, and when a baseline is established")
    func bedtimes() {
        let a = BedtimeBaseline.minutesFromMidnight(hour: 23, minute: 40), b = BedtimeBaseline.minutesFromMidnight(hour: 0, minute: 20)
        #expect(a == -20 && b == 20 && BedtimeBaseline.from(bedtimes: [a, b])?.medianMinutes == 0)
        #expect(BedtimeBaseline.from(bedtimes: Array(repeating: -60, count: 6))?.isEstablished == false)
        #expect(BedtimeBaseline.from(bedtimes: Array(repeating: -60, count: 7))?.isEstablished == true)
        #expect(BedtimeBaseline.from(bedtimes: []) == nil)
    }

    @Test("Z13–Z14: an empty night scores 0; the points sum to 100")
    func emptyNight() {
        let z13 = night(0)
        #expect(z13.score == 0 && z13.coverage < 0.5)
        #expect(SleepContributorKind.allCases.reduce(0) { $0 + $1.points } == 100)
        #expect(z13.algorithmVersion == 2)
    }
}

/// Days in a zone whose DST change skips midnight: America/Santiago's 2026-09-06 starts at
/// 01:00 (-03), the day before at 00:00 (-04).
@Suite("Local days across a DST change at midnight")
struct LocalCalendarMidnightTests {
    let calendar = LocalCalendar(timeZone: TimeZone(identifier: "America/Santiago")!)
    // 2026-09-05 00:00 -04, 2026-09-06 01:00 -03 (= 04:00Z), 2026-09-07 00:00 -03.
    let september5: Int64 = 1_788_580_800_000, september6: Int64 = 1_788_667_200_000, september7: Int64 = 1_788_750_000_000

    @Test("the day whose midnight is skipped starts at its first instant, whichever way it is reached; the next day starts at its midnight (adding to 01:00 kept 01:00)")
    func skippedMidnight() {
        #expect(calendar.startOfDay(year: 2026, month: 9, day: 6) == september6)
        #expect(calendar.startOfDay(year: 2026, month: 9, day: 7) == september7)
        #expect(calendar.day(september5, adding: 1) == september6)
        #expect(calendar.day(september6, adding: 1) == september7)
        #expect(calendar.day(september7, adding: -1) == september6)
        #expect(calendar.day(september7, adding: -2) == september5)
        #expect(calendar.day(september5, adding: 2) == september7)
        #expect(calendar.startOfDay(september6 + 3_600_000) == september6)
        #expect(calendar.dayString(september6) == "2026-09-06")
        // Ninety days back from the 7th: ninety distinct local dates, none skipped.
        let dates = (0..<90).map { calendar.dayString(calendar.day(september7, adding: -$0)) }
        #expect(Set(dates).count == 90 && dates.contains("2026-09-06"))
    }
}
