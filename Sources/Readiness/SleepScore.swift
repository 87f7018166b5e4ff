import Foundation

/// One sleep-stage block, as stored.
public struct SleepStageBlock: Sendable, Equatable {
    public var stageRaw: String
    public var durationMinutes: Int

    public init(stageRaw: String, durationMinutes: Int) {
        self.stageRaw = stageRaw
        self.durationMinutes = durationMinutes
    }
}

public enum SleepContributorKind: String, Sendable, CaseIterable {
    case duration, deep, rem, restfulness, timing

    public var points: Double {
        switch self {
        case .duration: return 30
        case .deep: return 25
        case .rem: return 20
        case .restfulness: return 15
        case .timing: return 10
        }
    }

    public var title: String {
        switch self {
        case .duration: return "Duration"
        case .deep: return "Deep sleep"
        case .rem: return "REM sleep"
        case .restfulness: return "Restfulness"
        case .timing: return "Bedtime consistency"
        }
    }
}

public struct SleepContributor: Sendable, Equatable {
    public var kind: SleepContributorKind
    public var earned: Double
    public var detail: String
}

public struct SleepScoreResult: Sendable, Equatable {
    public var score: Int
    public var availablePoints: Double
    public var coverage: Double { availablePoints / 100 }
    public var contributors: [SleepContributor]
    public var deepPercent: Int
    public var lightPercent: Int
    public var awakePercent: Int?
    public var remPercent: Int?
    public var asleepMinutes: Int
    public let algorithmVersion = 2

    public var label: String {
        switch score {
        case 85...: return "Excellent"
        case 70...: return "Good"
        case 55...: return "Fair"
        default: return "Needs work"
        }
    }
}

/// Sleep score v2 (readiness.md §8). A stage the ring cannot see (no REM block) leaves the
/// denominator instead of scoring as zero.
public enum SleepScore {
    /// - Parameters:
    ///   - totalMinutes: time in bed.
    ///   - bedtimeDriftMinutes: |tonight's bedtime − baseline median|, with the baseline; only
    ///     an established baseline adds the timing contributor. Readiness passes none.
    public static func calculate(totalMinutes: Int, blocks: [SleepStageBlock],
                                 bedtime: (drift: Double, baseline: BedtimeBaseline)? = nil) -> SleepScoreResult {
        let inBed = Double(max(0, totalMinutes))
        func minutes(_ stage: String) -> Double {
            max(0, Double(Saturating.sum(blocks.lazy.filter { $0.stageRaw == stage }.map(\.durationMinutes))))
        }
        let deep = minutes("deep"), light = minutes("light"), awake = minutes("awake"), rem = minutes("rem")
        let covered = blocks.filter { ["deep", "light", "awake", "rem"].contains($0.stageRaw) }
            .reduce(0.0) { $0 + Double(max(0, $1.durationMinutes)) }
        let hasAwakeSignal = blocks.contains { $0.stageRaw == "awake" } || awake > 0 || (inBed > 0 && covered >= 0.95 * inBed)
        let hasRemSignal = blocks.contains { $0.stageRaw == "rem" } || rem > 0
        let asleep = hasAwakeSignal ? max(0, inBed - awake) : inBed
        let deepPct = inBed > 0 ? deep / inBed * 100 : 0
        let lightPct = inBed > 0 ? light / inBed * 100 : 0
        let awakePct: Double? = inBed > 0 && hasAwakeSignal ? awake / inBed * 100 : nil
        let remPct: Double? = inBed > 0 && hasRemSignal ? rem / inBed * 100 : nil

        var contributors: [SleepContributor] = []
        let duration = BandCurve.twoSided(asleep / 60, idealLow: 7, idealHigh: 9, softLow: 6, softHigh: 9.5, hardLow: 4, hardHigh: 12, points: 30)
        contributors.append(SleepContributor(kind: .duration, earned: duration, detail: asleepText(asleep)))
        if inBed > 0 {
            let earned = BandCurve.twoSided(deepPct, idealLow: 13, idealHigh: 23, softLow: 5, softHigh: 35, hardLow: 0, hardHigh: 45, points: 25)
            contributors.append(SleepContributor(kind: .deep, earned: earned, detail: "\(Saturating.integerText(deepPct))% of the night"))
        }
        if let remPct {
            let earned = BandCurve.twoSided(remPct, idealLow: 20, idealHigh: 25, softLow: 15, softHigh: 30, hardLow: 5, hardHigh: 40, points: 20)
            contributors.append(SleepContributor(kind: .rem, earned: earned, detail: "\(Saturating.integerText(remPct))% of the night"))
        }
        if let awakePct {
            contributors.append(SleepContributor(kind: .restfulness, earned: restfulness(awakePct),
                                                 detail: "\(Saturating.integerText(awakePct))% awake"))
        }
        if let bedtime, bedtime.baseline.isEstablished {
            let d = bedtime.drift
            let detail = !d.isFinite ? "Bedtime drift unknown"
                : d < 15 ? "In line with your usual bedtime" : "\(Saturating.integerText(d)) min from your usual bedtime"
            contributors.append(SleepContributor(kind: .timing, earned: timing(d), detail: detail))
        }

        let available = contributors.reduce(0) { $0 + $1.kind.points }
        let earned = contributors.reduce(0) { $0 + $1.earned }
        let score = available >= 50 ? Saturating.int(min(100, max(0, roundHalfAwayFromZero(earned / available * 100)))) : 0
        return SleepScoreResult(
            score: score, availablePoints: available, contributors: contributors,
            deepPercent: roundedInt(deepPct), lightPercent: roundedInt(lightPct),
            awakePercent: awakePct.map(roundedInt), remPercent: remPct.map(roundedInt),
            asleepMinutes: roundedInt(asleep))
    }

    /// Restfulness points (15) for the percentage of the night awake.
    public static func restfulness(_ a: Double) -> Double {
        let p = SleepContributorKind.restfulness.points
        guard a.isFinite else { return 0 }
        if a <= 10 { return p }
        if a <= 20 { return p * (1 - 0.65 * (a - 10) / 10) }
        return p * 0.35 * clamp01((35 - a) / 15)
    }

    /// Bedtime-consistency points (10) for a drift in minutes.
    public static func timing(_ d: Double) -> Double {
        let p = SleepContributorKind.timing.points
        guard d.isFinite else { return 0 }
        if d <= 30 { return p }
        if d <= 60 { return p * (1 - 0.45 * (d - 30) / 30) }
        return p * 0.55 * clamp01((120 - d) / 60)
    }

    /// A stage can hold more minutes than the night (blocks are not checked against
    /// totalMinutes), so a percentage may exceed any Int: it saturates.
    private static func roundedInt(_ value: Double) -> Int { Saturating.int(roundHalfAwayFromZero(value)) }

    private static func asleepText(_ minutes: Double) -> String {
        let total = roundedInt(minutes)
        if total < 60 { return "\(total)m asleep" }
        let remainder = total % 60
        return "\(total / 60)h \(remainder < 10 ? "0" : "")\(remainder)m asleep"
    }
}
