import Foundation
import PulseArchive
import PulseSystem
import PulseStore
import Readiness
import ReadinessChart

/// `readiness [--store DIR] [--days N] [--backfill] [--as-of] [--timezone] [--json] [--svg FILE] [--quiet]`
struct ReadinessCommand: Subcommand {
    static let spec = CommandSpec(
        name: "readiness",
        abstract: "Show the readiness history, or recompute it first.",
        discussion: "Lists the days ending at --as-of, or at the newest day with data (never after today), newest first: the stored score, its band, its coverage and the biggest drag, or why the day has no score.",
        options: [
            .store,
            .value("--days", valueName: "n", help: "Days to show (default: 30)."),
            .flag("--backfill", help: "Recompute the range first (rows at the current algorithm version are kept)."),
            .value("--as-of", valueName: "yyyy-mm-dd", help: "The last day of the range."),
            .value("--timezone", valueName: "tz", help: "The zone of day boundaries (default: $TZ or the system's)."),
            .json,
            .value("--svg", valueName: "file", help: "Also write a trend chart of the range as a self-contained SVG (a new file: an existing one is never replaced)."),
            .quiet,
        ]
    )

    let store: String
    let days: Int
    let backfill: Bool
    let asOf: DateComponents?
    let zone: TimeZone
    /// As the header names it: the name given (Foundation calls "UTC" "GMT").
    let zoneName: String
    let json: Bool
    let svgPath: String?
    let quiet: Bool
    let console: Console

    init(_ arguments: ParsedArguments, console: Console) throws {
        store = try console.storeDirectory(arguments)
        days = try ArgumentValues.integer(arguments.value("--days"), option: "--days", range: 1...3_650) ?? 30
        backfill = arguments.flag("--backfill")
        asOf = try ArgumentValues.day(arguments.value("--as-of"), option: "--as-of")
        (zone, zoneName) = try ArgumentValues.namedTimeZone(arguments.value("--timezone"), environment: console.environment)
        json = arguments.flag("--json")
        svgPath = arguments.value("--svg")
        if let svgPath {
            try ArgumentValues.requireFileName(svgPath, option: "--svg")
            try ArgumentValues.requireLastingName(svgPath, option: "--svg")
        }
        quiet = arguments.flag("--quiet")
        self.console = console
    }

    func run() throws -> Int32 {
        console.announceUpgrade(of: store, quiet: quiet)
        // Made first, so that a chart that would replace a file is refused before any work.
        let chartFile = try svgPath.map { try AtomicFile(targetPath: $0) }
        let now = ArgumentValues.nowMillis()
        let read = { (body: (PulseStore) throws -> [ReadinessDay]) throws -> [ReadinessDay] in
            backfill ? try PulseStore.withExclusiveAccess(self.store, create: false, activity: "a readiness backfill", body)
                : try PulseStore.withReadAccess(self.store, body)
        }
        let history = try read { store -> [ReadinessDay] in
            let service = ReadinessService(store: store, timeZone: zone)
            let anchor = try asOf.map { service.calendar.startOfDay(year: $0.year!, month: $0.month!, day: $0.day!) } ?? service.defaultAnchor(now: now)
            if backfill {
                let progress = ProgressLine("Scoring readiness", unit: "days", console: console, quiet: quiet)
                defer { progress.finish() }
                _ = try service.backfill(days: days, anchorDay: anchor, now: now, honoringToggle: false,
                                         committing: "the store \(self.store) holds the readiness scores recomputed for the \(days) days", progress: progress.update)
            }
            return try service.history(days: days, anchorDay: anchor)
        }
        if let file = chartFile {
            let chart = ReadinessTrendChart.svg(history.reversed().map { .init(date: $0.date, score: $0.stored?.score, bandRaw: $0.stored?.bandRaw) },
                                                title: "Readiness, \(history.last?.date ?? "") to \(history.first?.date ?? "")")
            try Array(chart.utf8).withUnsafeBytes { try file.file.write($0) }
            try file.commit()
        }
        // readiness.md §9: a row belongs to the day its date falls in, here. Rows computed in
        // another zone begin inside a day of this one, and west of where they were computed
        // each lands on the day before: said, not left to be found.
        let elsewhere = history.filter { day in day.stored.map { $0.date != day.dayStart } ?? false }
        if !quiet, let first = elsewhere.first {
            console.warn("\(elsewhere.count) of the days shown hold a score computed in another time zone (the one shown for \(first.date) is of a day that began at \(Self.localTime(first.stored!.date, zone: zone)) here): a score is shown on the day in which its day began here, a day early west of where it was computed; run with --timezone set to the zone it was computed in")
        }
        if json {
            try console.out(JSONReport.object([("days", .array(history.map(Self.jsonDay)))]).text)
        } else {
            try console.out(Self.table(history, store: store, zoneName: zoneName))
            if let svgPath { console.err("Wrote the trend chart to \(svgPath)") }
        }
        return 0
    }

    /// `HH:mm` of `instant` in `zone`.
    static func localTime(_ instant: Int64, zone: TimeZone) -> String {
        let calendar = LocalCalendar(timeZone: zone)
        return String(format: "%02d:%02d", calendar.hour(instant), calendar.minute(instant))
    }

    static func reason(_ day: ReadinessDay) -> String? {
        day.notComputed ? "notComputed" : day.reason?.rawValue
    }

    static func jsonDay(_ day: ReadinessDay) -> JSONReport {
        let contributors: [JSONReport] = day.contributors.map { c in
            var members: [(String, JSONReport)] = [("kindRaw", .string(c.kindRaw)), ("earned", .double(c.earned)),
                                                   ("maxPoints", .double(c.maxPoints)), ("value", .double(c.value))]
            if let baseline = c.baseline { members.append(("baseline", .double(baseline))) }
            if let deviation = c.deviation { members.append(("deviation", .double(deviation))) }
            members.append(("detail", .string(c.detail)))
            return .object(members)
        }
        return .object([
            ("date", .string(day.date)),
            ("score", day.stored.map { .int($0.score) } ?? .null),
            ("band", day.stored.map { .string($0.bandRaw) } ?? .null),
            ("availablePoints", day.stored.map { .double($0.availablePoints) } ?? .null),
            ("reason", reason(day).map { .string($0) } ?? .null),
            ("contributors", .array(contributors)),
        ])
    }

    /// The stored availablePoints as a percentage. It is whatever the archive held: a huge
    /// one is written in full, one that is not a number shows as "-".
    static func coverage(_ availablePoints: Double) -> String {
        availablePoints.isFinite ? Saturating.integerText(availablePoints) + "%" : "-"
    }

    static func table(_ history: [ReadinessDay], store: String, zoneName: String) -> String {
        let reasons = [
            "noSignals": "no overnight signals", "baselineLearning": "still learning your baseline",
            "insufficientCoverage": "too little of the night captured", "notComputed": "not computed yet (run with --backfill)",
        ]
        let rows = history.map { day -> [String] in
            guard let stored = day.stored else {
                return [day.date, "-", "-", "-", "no score: " + (reasons[reason(day) ?? ""] ?? "")]
            }
            return [day.date, String(stored.score), stored.bandRaw, coverage(stored.availablePoints),
                    day.contributors.first?.detail ?? ""]
        }
        let range = "\(history.last?.date ?? "") to \(history.first?.date ?? "")"
        return "Readiness in \(store), \(range) (\(zoneName))\n"
            + Formatting.columns(["date", "score", "band", "coverage", "biggest drag"], rows, numeric: [1, 3])
    }
}
