// Fuzz target: the readiness and sleep-score maths fed with extreme values.
// The SwiftPM target fuzz-readiness (Package.swift), built by scripts/fuzz.sh with the fuzzer and
// address sanitizers and -DPULSE_FUZZ; without that flag it builds as a stub (docs/testing.md).
//
// The input is read as a history of days (readings, a night and its stage blocks, load
// minutes), the way ReadinessService gathers them from a store, and every day of it is scored.
// Numbers come from the input eight bytes at a time as raw Double and Int64 bit patterns, or,
// one time in two, from a table of extremes, so Double.greatestFiniteMagnitude, Float.max,
// ±∞, NaN, −0, subnormals and both ends of Int64 turn up in every run. Any trap is a crash;
// a score outside 0…100, a NaN, or a breakdown that is not JSON stops the fuzzer.
#if PULSE_FUZZ
@testable import Readiness
@testable import ReadinessChart
import Foundation

/// Reads numbers from the fuzz input; past its end, zeros.
private struct Extremes {
    var bytes: ArraySlice<UInt8>

    static let doubles: [Double] = [
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .infinity, -.infinity, .nan, 0, -0.0,
        .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude, Double(Float.greatestFiniteMagnitude),
        1e19, -1e19, 9_223_372_036_854_775_808.0, 1e308, 1e-308, 50, 55, 36, 45, 1, 0.5, 100,
    ]
    static let integers: [Int64] = [.max, .min, .max - 1, .min + 1, 0, 1, -1, 60, 450, 480, 1_772_000_000_000, 86_400_000]

    mutating func byte() -> UInt8 { bytes.popFirst() ?? 0 }

    mutating func raw() -> UInt64 {
        (0..<8).reduce(0) { value, _ in value << 8 | UInt64(byte()) }
    }

    mutating func double() -> Double {
        let selector = byte()
        return selector & 1 == 0 ? Self.doubles[Int(selector >> 1) % Self.doubles.count] : Double(bitPattern: raw())
    }

    mutating func int64() -> Int64 {
        let selector = byte()
        return selector & 1 == 0 ? Self.integers[Int(selector >> 1) % Self.integers.count] : Int64(bitPattern: raw())
    }

    mutating func optionalDouble() -> Double? { byte() % 4 == 0 ? nil : double() }
}

private struct Day {
    var start: Int64
    var hrv: [(timestamp: Int64, value: Double)] = []
    var hr: [Double] = []
    var temperature: [(timestamp: Int64, value: Double)] = []
    var totalMinutes = 0
    var blocks: [SleepStageBlock] = []
    var load: Double?
}

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

private func checkSleep(_ result: SleepScoreResult) {
    check((0...100).contains(result.score), "sleep score \(result.score)")
    check(result.availablePoints.isFinite && result.availablePoints <= 100, "sleep available \(result.availablePoints)")
    for c in result.contributors {
        check(c.earned.isFinite && c.earned >= 0 && c.earned <= c.kind.points && !c.detail.isEmpty, "sleep contributor \(c)")
    }
    check(result.asleepMinutes >= 0, "asleep \(result.asleepMinutes)")
}

private func checkReadiness(_ outcome: ReadinessOutcome, _ inputs: ReadinessInputs) {
    guard case .scored(let s) = outcome else { return }
    check((0...100).contains(s.score) && s.band == ReadinessBand(score: s.score), "score \(s.score) for \(inputs)")
    check(s.availablePoints >= 50 && s.availablePoints <= 100, "available \(s.availablePoints) for \(inputs)")
    for c in s.contributors {
        check(c.earned.isFinite && c.earned >= 0 && c.earned <= c.maxPoints && !c.detail.isEmpty, "contributor \(c) for \(inputs)")
        check(!c.value.isNaN && !(c.baseline?.isNaN ?? false) && !(c.deviation?.isNaN ?? false), "NaN in \(c) for \(inputs)")
    }
    let json = ContributorsJSON.encode(s.contributors)
    let parsed = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [Any]
    check(parsed != nil, "contributors JSON \(json)")
    check(json == "[]" || ContributorsJSON.decode(json).count == s.contributors.count, "contributors JSON round trip \(json)")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReadiness(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var input = Extremes(bytes: ArraySlice(UnsafeBufferPointer(start: data, count: size)))
    let stages = ["deep", "light", "awake", "rem", "unknown"]

    var days: [Day] = []
    for index in 0..<(1 + Int(input.byte() % 10)) {
        var day = Day(start: Int64(index) * 86_400_000)
        for _ in 0..<(input.byte() % 5) { day.hrv.append((input.byte() % 4 == 0 ? input.int64() : day.start, input.double())) }
        for _ in 0..<(input.byte() % 5) { day.hr.append(input.double()) }
        for _ in 0..<(input.byte() % 3) { day.temperature.append((day.start, input.double())) }
        day.totalMinutes = Int(input.int64())
        for _ in 0..<(input.byte() % 6) {
            day.blocks.append(SleepStageBlock(stageRaw: stages[Int(input.byte()) % stages.count], durationMinutes: Int(input.int64())))
        }
        day.load = input.optionalDouble()
        days.append(day)
    }

    // Sleep score with a bedtime baseline from doubles, and its pieces.
    let bedtimes = (0..<(input.byte() % 16)).map { _ in input.double() }
    if let baseline = BedtimeBaseline.from(bedtimes: bedtimes) {
        checkSleep(SleepScore.calculate(totalMinutes: Int(input.int64()), blocks: days[0].blocks, bedtime: (input.double(), baseline)))
    }
    let drift = input.double(), awake = input.double()
    check(SleepScore.timing(drift).isFinite && SleepScore.restfulness(awake).isFinite, "timing \(drift) / restfulness \(awake)")

    // Every day of the history scored as ReadinessService would.
    for (index, day) in days.enumerated() {
        let prior = days[..<index]
        var inputs = ReadinessInputs()
        let hrv = day.hrv.map(\.value).filter { $0 > 0 }
        if !hrv.isEmpty {
            inputs.hrv = hrv.reduce(0, +) / Double(hrv.count)
            inputs.hrvBaseline = BaselineStats.compute(prior.flatMap(\.hrv))
        }
        let temperature = day.temperature.map(\.value).filter { $0 > 0 }
        if !temperature.isEmpty {
            inputs.skinTemperature = temperature.reduce(0, +) / Double(temperature.count)
            inputs.skinTemperatureBaseline = BaselineStats.compute(prior.flatMap(\.temperature))
        }
        let heartRate = day.hr.filter { $0 > 0 }
        if !heartRate.isEmpty {
            inputs.restingHeartRate = Percentile.interpolated(heartRate.sorted(), 0.10)
            inputs.restingHeartRateBaseline = input.optionalDouble()
        }
        if day.totalMinutes > 0 {
            let sleep = SleepScore.calculate(totalMinutes: day.totalMinutes, blocks: day.blocks)
            checkSleep(sleep)
            inputs.sleepScore = sleep.score
        } else if input.byte() % 8 == 0 {
            inputs.sleepScore = Int(input.int64())
        }
        if index > 0 { inputs.priorDayLoadMinutes = days[index - 1].load.map { max(0, $0) } }
        let loads = prior.dropLast().suffix(7).compactMap(\.load).map { max(0, $0) }
        if loads.count >= 4 {
            let mean = loads.reduce(0, +) / Double(loads.count)
            inputs.loadBaselineMinutes = mean > 0 ? mean : nil
        }
        checkReadiness(ReadinessEvaluator.evaluate(inputs), inputs)

        // The same evaluator over baselines given field by field, not only computed ones.
        var raw = inputs
        raw.hrvBaseline = BaselineStats(mean: input.double(), median: input.double(), standardDeviation: input.double(), p25: input.double(),
                                        p75: input.double(), sampleCount: Int(input.int64()), spanDays: input.double())
        raw.skinTemperatureBaseline = raw.hrvBaseline
        raw.hrv = input.optionalDouble()
        raw.skinTemperature = input.optionalDouble()
        raw.priorDayLoadMinutes = input.optionalDouble()
        raw.loadBaselineMinutes = input.optionalDouble()
        checkReadiness(ReadinessEvaluator.evaluate(raw), raw)
    }

    // Integer sums: exact whenever they fit, whatever the order.
    let minutes = days.flatMap(\.blocks).map(\.durationMinutes)
    let sum = Saturating.sum(minutes)
    check(sum == Saturating.sum(minutes.reversed()), "sum depends on order: \(minutes)")
    if sum != .max && sum != .min { check(sum == minutes.reduce(0, &+), "sum \(sum) of \(minutes)") }

    // Local-day arithmetic and the chart, at any instant and any stored score; one input in
    // four, as both cost more than the scoring.
    guard input.byte() % 4 == 0 else { return 0 }
    let calendar = LocalCalendar(timeZone: berlin)
    let instant = input.int64()
    check((0...23).contains(calendar.hour(instant)) && (0...59).contains(calendar.minute(instant)), "local time of \(instant)")
    _ = calendar.day(calendar.startOfDay(instant), adding: Int(input.byte()) - 128)
    _ = calendar.dayString(instant)
    let chartDays = days.map { ReadinessTrendChart.Day(date: "2026-03-15", score: $0.totalMinutes, bandRaw: nil) }
    check(!ReadinessTrendChart.svg(chartDays).contains("nan"), "NaN in the chart")
    return 0
}

private let berlin = TimeZone(identifier: "Europe/Berlin")!
#else
import Foundation

/// Built without `-DPULSE_FUZZ` (a plain `swift build`): libFuzzer is not linked, so there is
/// nothing to run.
@main
enum NotBuiltForFuzzing {
    static func main() {
        FileHandle.standardError.write(Data("fuzz-readiness: built without the fuzzer; scripts/fuzz.sh builds it (docs/testing.md)\n".utf8))
        exit(64)
    }
}
#endif
