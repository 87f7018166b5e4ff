import Foundation

/// The five things readiness weighs, in canonical order.
public enum ContributorKind: String, Sendable, CaseIterable, Equatable {
    case hrv
    case restingHeartRate
    case sleep
    case skinTemperature
    case trainingLoad

    public var title: String {
        switch self {
        case .hrv: return "HRV"
        case .restingHeartRate: return "Resting HR"
        case .sleep: return "Sleep"
        case .skinTemperature: return "Skin temperature"
        case .trainingLoad: return "Training load"
        }
    }

    public var maxPoints: Double {
        switch self {
        case .hrv: return 30
        case .restingHeartRate: return 25
        case .sleep: return 30
        case .skinTemperature: return 10
        case .trainingLoad: return 5
        }
    }
}

/// What readiness knows about one morning. Every input may be missing.
public struct ReadinessInputs: Sendable, Equatable {
    public var hrv: Double?
    public var hrvBaseline: BaselineStats?
    public var restingHeartRate: Double?
    public var restingHeartRateBaseline: Double?
    public var sleepScore: Int?
    public var skinTemperature: Double?
    public var skinTemperatureBaseline: BaselineStats?
    public var priorDayLoadMinutes: Double?
    public var loadBaselineMinutes: Double?

    public init(hrv: Double? = nil, hrvBaseline: BaselineStats? = nil, restingHeartRate: Double? = nil,
                restingHeartRateBaseline: Double? = nil, sleepScore: Int? = nil, skinTemperature: Double? = nil,
                skinTemperatureBaseline: BaselineStats? = nil, priorDayLoadMinutes: Double? = nil, loadBaselineMinutes: Double? = nil) {
        self.hrv = hrv
        self.hrvBaseline = hrvBaseline
        self.restingHeartRate = restingHeartRate
        self.restingHeartRateBaseline = restingHeartRateBaseline
        self.sleepScore = sleepScore
        self.skinTemperature = skinTemperature
        self.skinTemperatureBaseline = skinTemperatureBaseline
        self.priorDayLoadMinutes = priorDayLoadMinutes
        self.loadBaselineMinutes = loadBaselineMinutes
    }
}

/// One scored contributor with its own plain-language explanation.
public struct ReadinessContributor: Sendable, Equatable {
    public var kind: ContributorKind
    public var earned: Double
    public var maxPoints: Double
    /// HRV ms, bpm, sleep score, °C or load minutes.
    public var value: Double
    /// Nil for sleep, which is absolute.
    public var baseline: Double?
    /// Signed: percent, bpm, °C or a ratio. Nil for sleep.
    public var deviation: Double?
    public var detail: String

    public var drag: Double { maxPoints - earned }
}

/// Why a morning has no score.
public enum UnavailableReason: String, Sendable, Equatable {
    /// Nothing usable was captured overnight.
    case noSignals
    /// Signals arrived but a baseline they need is not established yet.
    case baselineLearning
    /// Baselines are fine, but too little of the night was captured.
    case insufficientCoverage
}

public struct ReadinessScore: Sendable, Equatable {
    public var score: Int
    public var band: ReadinessBand
    /// Σ max points of the scored contributors: the score's denominator, 50–100.
    public var availablePoints: Double
    public var coverage: Double { availablePoints / 100 }
    /// Ranked by drag, largest first; equal drags in canonical order.
    public var contributors: [ReadinessContributor]
    /// The unscored kinds, canonical order.
    public var missing: [ContributorKind]
}

public enum ReadinessOutcome: Sendable, Equatable {
    case scored(ReadinessScore)
    case unavailable(UnavailableReason)
}

/// The readiness score of one morning (readiness.md §2–§5).
public enum ReadinessEvaluator {
    public static func evaluate(_ inputs: ReadinessInputs) -> ReadinessOutcome {
        var scored: [ReadinessContributor] = []
        var anySignal = false
        var awaitingBaseline = false

        func consider(_ kind: ContributorKind, isSignal: Bool, baseline: Double?, score: () -> ReadinessContributor) {
            guard isSignal else { return }
            anySignal = true
            if baseline != nil { scored.append(score()) } else { awaitingBaseline = true }
        }

        if let v = inputs.hrv {
            let b = usableMedian(inputs.hrvBaseline)
            consider(.hrv, isSignal: v.isFinite && v > 0, baseline: b) {
                let deviation = (v - b!) / b! * 100
                let earned = BandCurve.lowerIsWorse(deviation, ideal: 0, soft: -15, hard: -40, points: 30)
                return ReadinessContributor(kind: .hrv, earned: earned, maxPoints: 30, value: v, baseline: b, deviation: deviation,
                                            detail: Explanation.relative("HRV", deviation, epsilon: 0.5) { "\(Saturating.integerText($0))%" })
            }
        }
        if let v = inputs.restingHeartRate {
            let b = inputs.restingHeartRateBaseline.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
            consider(.restingHeartRate, isSignal: v.isFinite && v > 0, baseline: b) {
                let deviation = v - b!
                let earned = BandCurve.higherIsWorse(deviation, ideal: 0, soft: 5, hard: 12, points: 25)
                return ReadinessContributor(kind: .restingHeartRate, earned: earned, maxPoints: 25, value: v, baseline: b, deviation: deviation,
                                            detail: Explanation.relative("Resting HR", deviation, epsilon: 0.5) { "\(Saturating.integerText($0)) bpm" })
            }
        }
        if let score = inputs.sleepScore {
            consider(.sleep, isSignal: score >= 0, baseline: 0) {
                let v = Double(score)
                return ReadinessContributor(kind: .sleep, earned: BandCurve.lowerIsWorse(v, ideal: 88, soft: 65, hard: 30, points: 30),
                                            maxPoints: 30, value: v, baseline: nil, deviation: nil, detail: "Sleep score \(score)")
            }
        }
        if let v = inputs.skinTemperature {
            let b = usableMedian(inputs.skinTemperatureBaseline)
            consider(.skinTemperature, isSignal: v.isFinite && v > 0, baseline: b) {
                let deviation = v - b!
                let earned = BandCurve.higherIsWorse(abs(deviation), ideal: 0.2, soft: 0.6, hard: 1.2, points: 10)
                return ReadinessContributor(kind: .skinTemperature, earned: earned, maxPoints: 10, value: v, baseline: b, deviation: deviation,
                                            detail: Explanation.relative("Skin temperature", deviation, epsilon: 0.05) { String(format: "%.1f °C", $0) })
            }
        }
        if let v = inputs.priorDayLoadMinutes {
            let b = inputs.loadBaselineMinutes.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
            consider(.trainingLoad, isSignal: v.isFinite && v >= 0, baseline: b) {
                let ratio = v / b!
                return ReadinessContributor(kind: .trainingLoad, earned: BandCurve.higherIsWorse(ratio, ideal: 1.2, soft: 1.8, hard: 3.0, points: 5),
                                            maxPoints: 5, value: v, baseline: b, deviation: ratio, detail: Explanation.load(ratio))
            }
        }

        guard anySignal else { return .unavailable(.noSignals) }
        let available = scored.reduce(0) { $0 + $1.maxPoints }
        let hasCore = scored.contains { $0.kind == .hrv || $0.kind == .sleep }
        if available < ReadinessConstants.minAvailablePoints || !hasCore {
            return .unavailable(awaitingBaseline ? .baselineLearning : .insufficientCoverage)
        }
        let earned = scored.reduce(0) { $0 + $1.earned }
        let score = Saturating.int(min(100, max(0, roundHalfAwayFromZero(earned / available * 100))))
        let canonical = ContributorKind.allCases
        let ranked = scored.enumerated().sorted { a, b in
            a.element.drag != b.element.drag ? a.element.drag > b.element.drag : a.offset < b.offset
        }.map(\.element)
        let missing = canonical.filter { kind in !scored.contains { $0.kind == kind } }
        return .scored(ReadinessScore(score: score, band: ReadinessBand(score: score), availablePoints: available,
                                      contributors: ranked, missing: missing))
    }

    /// A baseline's median if it is established and usable.
    private static func usableMedian(_ stats: BaselineStats?) -> Double? {
        guard let stats, stats.isEstablished, stats.median.isFinite, stats.median > 0 else { return nil }
        return stats.median
    }
}

/// The exact explanation strings (readiness.md §5).
enum Explanation {
    static func relative(_ label: String, _ deviation: Double, epsilon: Double, magnitude: (Double) -> String) -> String {
        guard deviation.isFinite, abs(deviation) >= epsilon else { return "\(label) at your baseline" }
        return "\(label) \(magnitude(abs(deviation))) \(deviation < 0 ? "below" : "above") your baseline"
    }

    static func load(_ ratio: Double) -> String {
        guard ratio.isFinite else { return "Training load unknown" }
        if ratio <= 1.2 { return "Yesterday's load in your usual range" }
        return String(format: "Yesterday's load %.1f\u{00D7} your usual", ratio)
    }
}
