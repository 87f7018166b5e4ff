import Foundation
import PulseArchive

public struct DemoOptions: Sendable {
    /// How many days of wear, ending on `endDay`.
    public var days: Int
    public var seed: UInt64
    /// The last day of data, a local calendar day.
    public var endDay: DateComponents
    /// The zone whose midnights and evenings the data follows.
    public var timeZone: TimeZone
    /// Raw BLE packets logged per day (a heavy user logging everything has thousands).
    public var rawPacketsPerDay: Int
    /// Adds `readinessDailies` rows as an app on the readiness line would have stored them.
    public var includeStoredReadiness: Bool

    public init(days: Int = 120, seed: UInt64 = 1, endDay: DateComponents, timeZone: TimeZone = .current,
                rawPacketsPerDay: Int = 4, includeStoredReadiness: Bool = false) {
        self.days = days
        self.seed = seed
        self.endDay = endDay
        self.timeZone = timeZone
        self.rawPacketsPerDay = rawPacketsPerDay
        self.includeStoredReadiness = includeStoredReadiness
    }
}
