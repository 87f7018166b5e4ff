import Foundation
import PulseAge
import PulseArchive
import PulseVerify

/// `diff OLD NEW [--json] [--exit-code | --fail-on KINDS] [--show N]`
struct DiffCommand: Subcommand {
    static let spec = CommandSpec(
        name: "diff",
        abstract: "Show what changed between two archives: rows, settings, attachments, documents.",
        discussion: "Matches rows by their table's unique key and compares them by content, so key order, whitespace, dialect, compression and date spelling are no change. Reads each archive once, streaming, with flat memory. Exit code 0 when it ran; with --exit-code 1 when anything differs; with --fail-on 1 only when one of the given kinds occurred (a key repeated within one archive also fails either). An archive that does not read: exit 1.",
        arguments: [.init(name: "old", help: "The older archive."), .init(name: "new", help: "The newer archive.")],
        options: [
            .json,
            .flag("--exit-code", help: "Exit 1 when the archives differ in anything, like git diff --exit-code."),
            .value("--fail-on", valueName: "kinds", help: "Exit 1 only when rows, settings, attachments or documents of these kinds occurred: removed, changed, added, comma-separated (e.g. removed,changed)."),
            .value("--show", valueName: "n", help: "List up to n keys of each kind per table and category (default: 0)."),
            .maxSize, .maxInflateRatio, .maxStringSize, .maxObjectSize, .identity, .passphraseFile,
        ],
        exclusive: [("--exit-code", "--fail-on")]
    )

    enum Kind: String, CaseIterable { case added, removed, changed }

    let old: String
    let new: String
    let keys: AgeKeys
    let json: Bool
    let exitCode: Bool
    let failOn: Set<Kind>
    let show: Int
    let limits: ArchiveLimits
    let zone: TimeZone
    let console: Console

    /// Whether OLD and NEW are one file that gives its bytes once (a pipe, a FIFO, a terminal):
    /// `-` and a name of standard input (`/dev/stdin`, `/dev/fd/0`), or one FIFO or process
    /// substitution named twice. The side read second would find it empty. A regular file is
    /// opened afresh by each name (a redirected one by `/dev/stdin` too).
    static func isOneStream(_ a: String, _ b: String) -> Bool {
        func identify(_ path: String) -> stat? {
            var info = stat()
            return (path == "-" ? fstat(STDIN_FILENO, &info) : stat(path, &info)) == 0 ? info : nil
        }
        guard let first = identify(a), let second = identify(b) else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino && first.st_mode & S_IFMT != S_IFREG
    }

    init(_ arguments: ParsedArguments, console: Console) throws {
        old = arguments.positionals[0]
        new = arguments.positionals[1]
        if old == "-" && new == "-" {
            throw UsageError(message: "OLD and NEW cannot both be standard input (-): name at least one file")
        }
        if Self.isOneStream(old, new) {
            throw UsageError(message: old == "-" || new == "-"
                ? "OLD and NEW cannot both be standard input (-, or \(old == "-" ? new : old) naming it): name at least one file"
                : "OLD and NEW are the same pipe (\(old)), which gives its bytes once: name two archives")
        }
        json = arguments.flag("--json")
        exitCode = arguments.flag("--exit-code")
        failOn = try Self.kinds(arguments.value("--fail-on"))
        show = try ArgumentValues.integer(arguments.value("--show"), option: "--show", range: 0...1000) ?? 0
        limits = try ArgumentValues.limits(arguments)
        keys = try KeyOptions.decryptionKeys(arguments, console: console, files: 2)
        // The Android dialect's local days (coachNotificationRecords.dateKey) are in $TZ's zone.
        zone = try ArgumentValues.timeZone(nil, environment: console.environment, commandHasOption: false)
        self.console = console
    }

    static func kinds(_ text: String?) throws -> Set<Kind> {
        guard let text else { return [] }
        var kinds = Set<Kind>()
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let kind = Kind(rawValue: String(part)) else {
                throw UsageError(message: "The value '\(text)' is invalid for '--fail-on': expected removed, changed or added, comma-separated")
            }
            kinds.insert(kind)
        }
        return kinds
    }

    /// Every archive `diff` reads is opened here: the one place that knows how a path becomes
    /// a reader (its limits, its zone).
    func openArchive(_ path: String) throws -> ArchiveReader {
        var reader = ArchiveReader(try ArgumentValues.archiveInput(path).decrypting(with: keys), limits: limits)
        reader.timeZone = zone
        return reader
    }

    func run() throws -> Int32 {
        let report = try ArchiveDiff.diff(old: openArchive(old), new: openArchive(new), show: show)
        try console.out(json ? Self.json(report, old: old, new: new).text : Self.text(report, old: old, new: new, show: show))
        return failed(report) ? 1 : 0
    }

    /// Whether the exit code says so: `--exit-code` for any difference, `--fail-on` for its
    /// kinds; with either, a key repeated within one archive (which `import` refuses) too.
    func failed(_ report: ArchiveDiffReport) -> Bool {
        if exitCode { return !report.identical || !report.problems.isEmpty }
        guard !failOn.isEmpty else { return false }
        if !report.problems.isEmpty { return true }
        return report.all.contains { _, counts in
            (failOn.contains(.added) && counts.added > 0) || (failOn.contains(.removed) && counts.removed > 0)
                || (failOn.contains(.changed) && counts.changed > 0)
        }
    }

    static func keyJSON(_ value: FieldValue) -> JSONReport {
        switch value {
        case .int(let v), .date(let v): return .int(v)
        case .string(let text): return .string(text)
        default: return .string(keyText(value))
        }
    }

    static func keyText(_ value: FieldValue) -> String {
        switch value {
        case .int(let v), .date(let v): return String(v)
        case .string(let text): return text
        case .double(let v): return String(v)
        case .bool(let v): return String(v)
        case .null: return "null"
        }
    }

    static func counts(_ counts: DiffCounts) -> JSONReport {
        .object([
            ("added", .int(counts.added)), ("removed", .int(counts.removed)), ("changed", .int(counts.changed)),
            ("addedKeys", .array(counts.addedKeys.map(keyJSON))), ("removedKeys", .array(counts.removedKeys.map(keyJSON))),
            ("changedKeys", .array(counts.changedKeys.map(keyJSON))),
        ])
    }

    static func archive(_ summary: ArchiveSummary, path: String) -> JSONReport {
        .object([("path", .string(path)), ("formatVersion", .int(summary.formatVersion)),
                 ("dialect", .string(summary.dialect.rawValue)), ("compressed", .bool(summary.isCompressed))])
    }

    static func json(_ report: ArchiveDiffReport, old: String, new: String) -> JSONReport {
        .object([
            ("identical", .bool(report.identical)),
            ("old", archive(report.old, path: old)),
            ("new", archive(report.new, path: new)),
            ("tables", .object(report.tables.sorted { $0.key < $1.key }.map { ($0.key, counts($0.value)) })),
            ("settings", counts(report.settings)),
            ("attachments", counts(report.attachments)),
            ("documents", counts(report.documents)),
            ("problems", .array(report.problems.map { problem in
                .object([("archive", .string(problem.side.rawValue)), ("table", .string(problem.category)),
                         ("repeatedKeys", .int(problem.repeats)), ("keys", .array(problem.keys.map(keyJSON))),
                         ("message", .string(message(problem, old: old, new: new)))])
            })),
        ])
    }

    static func message(_ problem: DiffProblem, old: String, new: String) -> String {
        let first = problem.keys.first.map { " (the first: \(keyText($0)))" } ?? ""
        return "\(problem.side == .old ? old : new): \(problem.category): \(ProgressLine.grouped(problem.repeats)) "
            + "\(problem.repeats == 1 ? "entry repeats a key" : "entries repeat keys") an earlier entry has\(first); "
            + "only the first is compared (verify reports this as an error)"
    }

    static func describe(_ summary: ArchiveSummary) -> String {
        "format \(summary.formatVersion), \(summary.dialect.rawValue), \(summary.isCompressed ? "gzip" : "plain JSON")"
    }

    static func text(_ report: ArchiveDiffReport, old: String, new: String, show: Int) -> String {
        var text = "Comparing \(ShownText.oneLine(old)) (\(describe(report.old)))\n     with \(ShownText.oneLine(new)) (\(describe(report.new)))\n"
        let differing = report.all.filter { !$0.1.isEmpty }
        if !differing.isEmpty {
            text += "\n" + Formatting.columns(["", "added", "removed", "changed"], differing.map { name, counts in
                [name, "+\(ProgressLine.grouped(counts.added))", "-\(ProgressLine.grouped(counts.removed))", "~\(ProgressLine.grouped(counts.changed))"]
            }, numeric: [1, 2, 3]) + "\n"
        }
        if show > 0 {
            for (name, counts) in differing {
                text += "\n\(name):\n"
                for (mark, keys, total) in [("+", counts.addedKeys, counts.added), ("-", counts.removedKeys, counts.removed), ("~", counts.changedKeys, counts.changed)] {
                    for key in keys { text += "  \(mark) \(ShownText.listed(keyText(key)))\n" }
                    if total > keys.count { text += "  \(mark) … and \(ProgressLine.grouped(total - keys.count)) more\n" }
                }
            }
        }
        if !report.problems.isEmpty { text += "\n" }
        for problem in report.problems { text += "warning: \(ShownText.oneLine(message(problem, old: old, new: new)))\n" }
        if differing.isEmpty && !report.problems.isEmpty {
            text += "\ndiff: no differences in what was compared, but keys repeat (above): only the first row of each was compared"
        } else if differing.isEmpty {
            text += "\ndiff: no differences"
        } else {
            let sum = differing.reduce((0, 0, 0)) { ($0.0 + $1.1.added, $0.1 + $1.1.removed, $0.2 + $1.1.changed) }
            text += "\ndiff: \(differing.count) of \(report.all.count) tables and categories differ: "
                + "+\(ProgressLine.grouped(sum.0)) -\(ProgressLine.grouped(sum.1)) ~\(ProgressLine.grouped(sum.2))"
        }
        return text
    }
}
