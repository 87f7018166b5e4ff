import Foundation
import PulseArchive
import PulseDemo
import PulseStore

/// `demo [--store DIR] [--days N] [--seed N]`: fills an empty store with synthetic ring data.
struct DemoCommand: Subcommand {
    static let spec = CommandSpec(
        name: "demo",
        abstract: "Fill an empty store with realistic synthetic ring data.",
        discussion: "The data is deterministic: the same --seed, --days, --end and time zone give the same store. Readiness is then computed for the last 90 days.",
        options: [
            .store,
            .value("--days", valueName: "n", help: "Days of wear (default: 120)."),
            .value("--seed", valueName: "n", help: "The random seed (default: 1)."),
            .value("--end", valueName: "yyyy-mm-dd", help: "The last day of data (default: today); the data, from a day before the first day to two days after this one, must lie within the years 0000–9999 (UTC)."),
            .value("--timezone", valueName: "tz", help: "The zone whose days the data follows (default: $TZ or the system's)."),
            .value("--raw-packets-per-day", valueName: "n", help: "Raw BLE packets logged per day (default: 4)."),
        ]
    )

    let store: String
    let options: DemoOptions
    let console: Console

    init(_ arguments: ParsedArguments, console: Console) throws {
        store = try console.storeDirectory(arguments)
        let zone = try ArgumentValues.timeZone(arguments.value("--timezone"), environment: console.environment)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let today = calendar.dateComponents([.year, .month, .day], from: Date())
        options = DemoOptions(
            days: try ArgumentValues.integer(arguments.value("--days"), option: "--days", range: 1...36_500) ?? 120,
            seed: UInt64(try ArgumentValues.integer(arguments.value("--seed"), option: "--seed", range: 0...Int.max) ?? 1),
            endDay: try ArgumentValues.day(arguments.value("--end"), option: "--end") ?? today,
            timeZone: zone,
            rawPacketsPerDay: try ArgumentValues.integer(arguments.value("--raw-packets-per-day"), option: "--raw-packets-per-day", range: 0...100_000) ?? 4)
        self.console = console
        // A usage error, before the store is touched: the days asked for cannot be archived.
        let span = SyntheticRing(options: options).span
        if !ArchiveDate.representable.contains(span.lowerBound) || !ArchiveDate.representable.contains(span.upperBound) {
            let fix = ArchiveDate.representable.contains(span.lowerBound) ? "an earlier --end" : "a later --end or fewer --days"
            throw UsageError(message: "The values of '--end' and '--days' put demo data outside the years 0000–9999 (UTC) that an archive can hold (the data runs from a day before the first day to two days after --end): choose \(fix)")
        }
    }

    func run() throws -> Int32 {
        var ring = SyntheticRing(options: options)
        let counts = try ring.fill(storeDirectory: store)
        let rows = counts.values.reduce(0, +)
        let report = try PulseStore.withExclusiveAccess(store, create: false, activity: "demo") { store in
            try BackfillRequest(days: 90, asOf: options.endDay, timeZone: options.timeZone).run(on: store, now: ArgumentValues.nowMillis())
        }
        try console.out("Filled \(store) with \(options.days) days of demo data: \(ProgressLine.grouped(rows)) rows; readiness scored on \(report.scored) of \(report.days) days")
        return 0
    }
}
