import Foundation
import PulseArchive
import PulseStore
import PulseVerify

/// `verify FILE [--store DIR] [--json]`
struct VerifyCommand: Subcommand {
    static let spec = CommandSpec(
        name: "verify",
        abstract: "Check that an archive is sound and restores; optionally compare it with a store.",
        discussion: "Checks the container (gzip checksum, length, end of stream), the structure (every row, key, count, date, attachment, settings blob and document), the references between tables, and a round trip through a temporary store. Reports every problem, not just the first. Exit code 0 only when there is no error (warnings allowed).",
        arguments: [.init(name: "file", help: "The archive to check.")],
        options: [
            .value("--store", valueName: "dir", help: "Also compare the archive with this store, table by table and document by document."),
            .value("--timezone", valueName: "tz", help: "The zone of day boundaries for the readiness checks (default: $TZ or the system's)."),
            .json, .quiet, .maxSize, .maxInflateRatio, .maxStringSize, .maxObjectSize, .identity, .passphraseFile,
        ]
    )

    let file: String
    let input: ArchiveInput
    let store: String?
    let zone: TimeZone
    let json: Bool
    let quiet: Bool
    let limits: ArchiveLimits
    let console: Console

    init(_ arguments: ParsedArguments, console: Console) throws {
        file = arguments.positionals[0]
        input = try ArgumentValues.archiveInput(file).decrypting(with: KeyOptions.decryptionKeys(arguments, console: console))
        limits = try ArgumentValues.limits(arguments)
        store = arguments.value("--store")
        zone = try ArgumentValues.timeZone(arguments.value("--timezone"), environment: console.environment)
        json = arguments.flag("--json")
        quiet = arguments.flag("--quiet")
        self.console = console
    }

    func run() throws -> Int32 {
        if let store { console.announceUpgrade(of: store, quiet: quiet) }
        let progress = ProgressLine("Verifying", console: console, quiet: quiet)
        defer { progress.finish() }
        let report = try ArchiveVerifier.verify(input, store: store, timeZone: zone, limits: limits, progress: progress.update)
        progress.finish()
        // A report that cannot be written takes the verdict with it: said on stderr instead.
        let first = report.problems.first { $0.severity == .error }.map { ": the first: " + ErrorAdvice.verify($0) } ?? ""
        let lost = "verify's report is lost; its verdict: " + (report.ok ? "OK" : "FAILED, \(report.errorCount) error\(report.errorCount == 1 ? "" : "s")\(first)")
        try console.out(json ? Self.json(report).text : Self.text(report, file: input.name), lost: lost)
        return report.ok ? 0 : 1
    }

    /// The report's keys when verify could not run to its end (the machine, the store, a key
    /// file), the error as its one problem: a job reading `.problems[]` reads why, and `error`
    /// tells it from a damaged archive.
    static func failureReport(_ message: String, arguments: ParsedArguments) -> JSONReport? {
        json(VerifyReport(couldNotFinish: message), error: message)
    }

    /// - Parameter error: why verify could not finish (`failureReport`), after `ok`.
    static func json(_ report: VerifyReport, error: String? = nil) -> JSONReport {
        var members: [(String, JSONReport)] = [("ok", .bool(report.ok))]
        if let error { members.append(("error", .string(error))) }
        members += [
            ("problems", .array(report.problems.map { problem in
                .object([("severity", .string(problem.severity.rawValue)), ("table", problem.table.map { .string($0) } ?? .null),
                         ("message", .string(ErrorAdvice.verify(problem)))])
            })),
            ("tables", .counts(report.tables)),
            ("tablesComplete", .bool(report.tablesComplete)),
            ("errors", .int(report.errorCount)),
            ("warnings", .int(report.warningCount)),
            // Problems counted in `errors` and `warnings` but not listed: past the first 100 of
            // each severity in a table. Keyed by table, "" for the file as a whole.
            ("omittedProblems", .counts(report.omittedErrors.merging(report.omittedWarnings, uniquingKeysWith: +))),
            ("roundTrip", report.roundTrip.map { .bool($0) } ?? .null),
            ("documents", .counts(report.documentClasses)),
        ]
        if let summary = report.summary {
            members.append(("formatVersion", .int(summary.formatVersion)))
            members.append(("compressed", .bool(summary.isCompressed)))
        }
        if let diff = report.storeDiff {
            members.append(("storeDiff", .object(diff.sorted { $0.key < $1.key }.map { table, difference in
                (table, .object([("missing", .int(difference.missing)), ("extra", .int(difference.extra)), ("changed", .int(difference.changed))]))
            })))
        }
        return .object(members)
    }

    static func text(_ report: VerifyReport, file: String) -> String {
        var perTable = report.omittedErrors.merging(report.omittedWarnings, uniquingKeysWith: +)
        for problem in report.problems { perTable[problem.table ?? "", default: 0] += 1 }
        var text = "Verifying \(ShownText.oneLine(file))"
        if let format = report.summary.map({ ($0.formatVersion, $0.isCompressed) }) ?? report.formatBeforeError {
            text += " (format \(format.0), \(format.1 ? "gzip" : "plain JSON"))"
        }
        text += "\n"
        let order = ArchiveTable.all.map(\.key) + ExtensionTable.allCases.map(\.rawValue)
            + ["settings", "attachments", "splits", "workouts", "stubs", "documents"]
        let names = order.filter { report.tables[$0] != nil || perTable[$0] != nil }
        let rows = names.map { name in
            [name, report.tables[name].map { ProgressLine.grouped($0) } ?? "-", perTable[name].map(String.init) ?? ""]
        }
        // A file that could not be opened has no table to show.
        if !rows.isEmpty {
            text += Formatting.columns(["table", "rows", "problems"], rows, numeric: [1, 2]) + "\n"
            if !report.tablesComplete { text += "  (what was read before the error below; the rest of the file was not)\n" }
        }
        if let diff = report.storeDiff {
            let differing = diff.filter { !$0.value.isEmpty }.keys.sorted()
            text += differing.isEmpty ? "\nThe store holds exactly what the archive holds.\n"
                : "\nThe archive differs from the store in \(differing.count) table\(differing.count == 1 ? "" : "s"): \(differing.joined(separator: ", ")).\n"
        }
        if !report.problems.isEmpty { text += "\n" }
        for problem in report.problems { text += "\(problem.severity.rawValue): \(ErrorAdvice.verify(problem))\n" }
        for (table, count) in report.omittedErrors.merging(report.omittedWarnings, uniquingKeysWith: +).sorted(by: { $0.key < $1.key }) {
            text += "… and \(ProgressLine.grouped(count)) more problem\(count == 1 ? "" : "s") \(table.isEmpty ? "in the file" : "in \(table)") (the first \(BoundedProblems<VerifyProblem>.perTable) of each kind are listed)\n"
        }
        let errors = report.errorCount
        let warnings = report.warningCount
        let warningText = "\(warnings) warning\(warnings == 1 ? "" : "s")"
        if report.ok {
            text += "\nverify: OK: the archive is sound" + (report.roundTrip == true ? " and restores" : "") + " (\(warningText))"
        } else {
            text += "\nverify: FAILED: \(errors) error\(errors == 1 ? "" : "s"), \(warningText)"
        }
        return text
    }
}
