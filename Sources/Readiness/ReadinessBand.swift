/// The readiness bands (raw value = display text).
public enum ReadinessBand: String, Sendable, CaseIterable {
    case primed = "Primed"
    case ready = "Ready"
    case moderate = "Moderate"
    case restNeeded = "Rest needed"

    public init(score: Int) {
        switch score {
        case 85...: self = .primed
        case 70..<85: self = .ready
        case 55..<70: self = .moderate
        default: self = .restNeeded
        }
    }
}
