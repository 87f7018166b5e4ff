import Foundation
import PulseArchive
import PulseGadgetbridge
import PulseStore

/// `import FILE [--store DIR] [--replace|--merge] [--no-backfill] [--as-of] [--timezone] [--json]`
struct ImportCommand: Subcommand {
    static let spec = CommandSpec(
        name: "import",
        abstract: "Restore an archive into the store.",
        discussion: "Reads and checks the whole archive before the store changes, then applies it in one transaction: on any failure the store is left as it was. A store that already holds data needs --replace or --merge; --replace first saves the store to <store>/backups/.",
        arguments: [.init(name: "file", help: "The archive: plain JSON or gzip; or a Gadgetbridge database or backup ZIP (docs/gadgetbridge.md).")],
        options: [
            .store,
            .flag("--replace", help: "Make the store equal to the archive (the app's import), after a safety backup."),
            .flag("--merge", help: "Add only the rows, settings and attachments the store lacks; existing ones win."),
            .flag("--no-backfill", help: "Do not recompute readiness after the import."),
            .value("--as-of", valueName: "yyyy-mm-dd", help: "The last day of the readiness backfill (default: the newest day with data)."),
            .value("--timezone", valueName: "tz", help: "The zone of day boundaries (default: $TZ or the system's)."),
            .json, .quiet, .maxSize, .maxInflateRatio, .maxStringSize, .maxObjectSize, .identity, .passphraseFile,
        ],
        exclusive: [("--replace", "--merge")]
    )

    let file: String
    let input: ArchiveInput
    let store: String
    let mode: ImportMode?
    let backfill: BackfillRequest?
    /// The zone of day boundaries (a Gadgetbridge history's local dates too).
    let zone: TimeZone
    /// The zone as reports name it: the name given (Foundation calls "UTC" "GMT"), else the zone's.
    let zoneName: String
    let limits: ArchiveLimits
    let json: Bool
    let quiet: Bool
    let console: Console

    init(_ arguments: ParsedArguments, console: Console) throws {
        file = arguments.positionals[0]
        input = try ArgumentValues.archiveInput(file).decrypting(with: KeyOptions.decryptionKeys(arguments, console: console))
        store = try console.storeDirectory(arguments)
        mode = arguments.flag("--replace") ? .replace : arguments.flag("--merge") ? .merge : nil
        let asOf = try ArgumentValues.day(arguments.value("--as-of"), option: "--as-of")
        (zone, zoneName) = try ArgumentValues.namedTimeZone(arguments.value("--timezone"), environment: console.environment)
        backfill = arguments.flag("--no-backfill") ? nil : BackfillRequest(days: 90, asOf: asOf, timeZone: zone)
        limits = try ArgumentValues.limits(arguments)
        json = arguments.flag("--json")
        quiet = arguments.flag("--quiet")
        self.console = console
    }

    func run() throws -> Int32 {
        console.announceUpgrade(of: store, quiet: quiet)
        let input: ArchiveInput
        switch try GadgetbridgeCommands.source(file, input: self.input, limits: limits) {
        case .gadgetbridge(let database): return try GadgetbridgeCommands.importHistory(self, database: database)
        case .archive(let archive): input = archive
        }
        let progress = ProgressLine("Importing", console: console, quiet: quiet)
        let scoring = ProgressLine("Scoring readiness", unit: "days", console: console, quiet: quiet)
        defer { progress.finish(); scoring.finish() }
        let result = try PulseStore.importArchive(input, storeDirectory: store, options: ImportOptions(
            mode: mode, appVersion: "pulse-archive \(PulseArchiveCommand.version)", now: ArgumentValues.nowMillis(),
            limits: limits, backfill: backfill, progress: progress.update,
            backfillProgress: { done, total in
                progress.finish()
                scoring.update(done: done, of: total)
            }))
        progress.finish()
        scoring.finish()
        try report(result)
        return 0
    }

    /// The import's report; a Gadgetbridge import adds its members and lines.
    func report(_ result: ImportResult, extraJSON: [(String, JSONReport)] = [], extraText: String = "") throws {
        for warning in result.warnings { console.warn(warning.message) }
        // Under `--quiet` too it is kept in the store's `backups/` (and in `--json`'s `safetyBackup`).
        if let backup = result.safetyBackupPath, !quiet {
            console.err("Saved the store's previous content to \(backup)")
        }
        if json {
            try console.out(JSONReport.object([
                ("mode", .string(result.mode)),
                ("tables", .counts(result.tables)),
                ("inserted", .counts(result.inserted)),
                ("readiness", .object([
                    ("scored", .int(result.readiness?.scored ?? 0)), ("unavailable", .int(result.readiness?.unavailable ?? 0)),
                    ("backfilled", .bool(result.readiness != nil)),
                    ("learnedRestingBaseline", result.readiness?.learnedRestingBaseline.map { .double($0) } ?? .null),
                ])),
                ("safetyBackup", result.safetyBackupPath.map { .string($0) } ?? .null),
                ("warnings", .array(result.warnings.map { .string($0.message) })),
            ] + extraJSON).text)
        } else {
            let added = result.inserted.values.reduce(0, +)
            var text = "Imported \(input.name) into \(store) (\(result.mode)): \(ProgressLine.grouped(added)) rows added\n"
            let rows = (ArchiveTable.all.map(\.key) + Formatting.extensionTables(in: result.tables)).map { key in
                [key, ProgressLine.grouped(result.tables[key] ?? 0), ProgressLine.grouped(result.inserted[key] ?? 0)]
            } + ["splits", "workouts", "stubs"].map { [$0, ProgressLine.grouped(result.tables[$0] ?? 0), "-"] }
            text += Formatting.columns(["table", "rows", "added"], rows, numeric: [1, 2])
            if let readiness = result.readiness {
                text += "\nReadiness: \(readiness.scored) of \(readiness.days) days scored"
                if let learned = readiness.learnedRestingBaseline {
                    text += String(format: " (learned a resting-HR baseline of %.1f bpm)", learned)
                }
            } else {
                text += "\nReadiness: not recomputed (--no-backfill)"
            }
            try console.out(text + extraText)
        }
    }
}
