import Foundation
import PulseArchive
import PulseStore

/// `export [--store DIR] [-o FILE] [--format-version 1|2] [--json]`
struct ExportCommand: Subcommand {
    static let spec = CommandSpec(
        name: "export",
        abstract: "Write an archive of the whole store.",
        discussion: "Writes one gzip-compressed archive, atomically: the file appears complete or not at all, and an existing file is never overwritten. Prints the path.",
        options: [
            .store,
            .value("--output", "-o", valueName: "file", help: "Where to write: a new file, or a directory to write pulseloop-backup-<yyyy-MM-dd-HHmm>.json.gz in (default: that name, here)."),
            .value("--format-version", valueName: "n", help: "2 (default), or 1 for apps on the format-1 line (no readinessDailies)."),
            .json, .quiet, .maxStringSize, .maxObjectSize,
        ]
    )

    let store: String
    let output: String
    let formatVersion: Int64
    let json: Bool
    let quiet: Bool
    let limits: ArchiveLimits
    let console: Console

    init(_ arguments: ParsedArguments, console: Console) throws {
        store = try console.storeDirectory(arguments)
        formatVersion = Int64(try ArgumentValues.integer(arguments.value("--format-version"), option: "--format-version", range: 1...2) ?? 2)
        output = try Self.outputPath(arguments.value("--output"), at: Date(),
                                     zone: { try ArgumentValues.timeZone(nil, environment: console.environment) })
        json = arguments.flag("--json")
        quiet = arguments.flag("--quiet")
        limits = try ArgumentValues.limits(arguments)
        self.console = console
    }

    /// `-o` as given; the default name in the directory `-o` names (a backup job's
    /// `-o /backups/`), or here without `-o`.
    /// - Parameter zone: the local zone, asked only when the default name is needed.
    static func outputPath(_ output: String?, at date: Date, zone: () throws -> TimeZone) throws -> String {
        guard let output else { return defaultFileName(at: date, zone: try zone()) }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: output, isDirectory: &isDirectory), isDirectory.boolValue else { return output }
        return (output.hasSuffix("/") ? output : output + "/") + defaultFileName(at: date, zone: try zone())
    }

    /// `pulseloop-backup-<yyyy-MM-dd-HHmm>.json.gz`, in local time.
    static func defaultFileName(at date: Date, zone: TimeZone) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy-MM-dd-HHmm"
        return "pulseloop-backup-\(formatter.string(from: date)).json.gz"
    }

    func run() throws -> Int32 {
        console.announceUpgrade(of: store, quiet: quiet)
        let progress = ProgressLine("Exporting", console: console, quiet: quiet)
        defer { progress.finish() }
        let result = try PulseStore.exportArchive(
            storeDirectory: store, to: output,
            options: ExportOptions(formatVersion: formatVersion, appVersion: "pulse-archive \(PulseArchiveCommand.version)",
                                   exportedAt: ArgumentValues.nowMillis(), limits: limits,
                                   progress: progress.update(done:of:)))
        progress.finish()
        for warning in result.warnings { console.err("warning: \(warning.message)") }
        if json {
            console.out(JSONReport.object([
                ("path", .string(result.path)),
                ("formatVersion", .int(result.formatVersion)),
                ("tables", .counts(result.tables.merging(result.documents) { a, _ in a })),
                ("bytes", .object([("compressed", .int(result.fileBytes)), ("uncompressed", .int(result.jsonBytes))])),
            ]).text)
        } else {
            let rows = result.tables.values.reduce(0, +)
            let documents = result.documents.values.reduce(0, +)
            console.err("Exported \(ProgressLine.grouped(rows)) rows and \(documents) documents from \(store) (format \(result.formatVersion), \(Formatting.bytes(result.fileBytes)))")
            console.out(result.path)
        }
        return 0
    }
}
