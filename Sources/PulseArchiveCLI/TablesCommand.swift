import Foundation
import PulseArchive
import PulseStore
import PulseTables

/// `tables (FILE | --store DIR) -o DIR [--format csv|ndjson] [--table NAME]… [--json]`:
/// parses and wires; the folder is `PulseTables`' work (docs/analysis.md).
struct TablesCommand: Subcommand {
    static let spec = CommandSpec(
        name: "tables",
        abstract: "Write every table as a CSV or NDJSON file, for pandas, DuckDB, SQLite or a spreadsheet.",
        discussion: "Writes a new folder: one file per table (a table without rows gets its header), settings, the attachments with their manifest, the documents, and tables.json (each file's rows and columns, with types and units). CSV is RFC 4180 (UTF-8, CRLF); dates are ISO 8601 UTC with milliseconds; numbers as an export writes them; null is an empty field. Reads an archive in one pass (plain JSON, gzip, age, either dialect, - for standard input) or a store. The folder appears complete or not at all. See docs/analysis.md.",
        arguments: [.init(name: "file", help: "The archive (- for standard input); leave it out with --store.", isOptional: true)],
        options: [
            .value("--store", valueName: "dir", help: "Read this store instead of an archive (what an export of it holds)."),
            .value("--output", "-o", valueName: "dir", help: "The folder to write: new, or an empty directory; never a link."),
            .value("--format", valueName: "csv|ndjson", help: "csv (default): RFC 4180; ndjson: one JSON object per line, the row as an export writes it."),
            .repeatable("--table", valueName: "name", help: "Write only this table (repeatable): a table key (measurements, …), documents, documentStubs, documentFiles, settings, attachments, mealEntries or foodProducts."),
            .json, .quiet, .maxSize, .maxInflateRatio, .maxStringSize, .maxObjectSize, .identity, .passphraseFile,
        ]
    )

    private enum Source {
        case archive(ArchiveInput)
        case store(String)
    }

    private let source: Source
    private let writer: TablesWriter
    private let json: Bool
    private let quiet: Bool
    private let limits: ArchiveLimits
    private let console: Console

    init(_ arguments: ParsedArguments, console: Console) throws {
        let file = arguments.positionals.first
        let store = arguments.value("--store")
        if file != nil, store != nil { throw UsageError(message: "Name an archive or --store, not both") }
        if file == nil, store == nil { throw UsageError(message: "Name an archive (- for standard input) or --store DIR") }
        guard let output = arguments.value("--output") else { throw UsageError(message: "Missing '--output <dir>': the new folder to write") }
        // An empty folder that is there already keeps the name it has: the rule is for names
        // this creates.
        var isFolder: ObjCBool = false
        if !(FileManager.default.fileExists(atPath: output, isDirectory: &isFolder) && isFolder.boolValue) {
            try ArgumentValues.requireLastingName(output, option: "-o")
        }
        let formatName = arguments.value("--format") ?? TablesFormat.csv.rawValue
        guard let format = TablesFormat(rawValue: formatName) else {
            throw UsageError(message: "The value '\(formatName)' is invalid for '--format': expected csv or ndjson")
        }
        let names = arguments.values("--table")
        if let unknown = names.first(where: { !TablesWriter.sectionKeys.contains($0) }) {
            throw UsageError(message: "There is no table '\(unknown)' for '--table': the tables are \(TablesWriter.sectionKeys.joined(separator: ", "))")
        }
        limits = try ArgumentValues.limits(arguments)
        json = arguments.flag("--json")
        quiet = arguments.flag("--quiet")
        self.console = console
        // The folder is checked (new or empty, not a link) before a passphrase is asked for.
        writer = try TablesWriter(directory: output, format: format, tables: names.isEmpty ? nil : Set(names), limits: limits)
        if let file {
            source = .archive(try ArgumentValues.archiveInput(file).decrypting(with: KeyOptions.decryptionKeys(arguments, console: console)))
        } else {
            source = .store(store!)
        }
    }

    func run() throws -> Int32 {
        let progress = ProgressLine("Writing tables", console: console, quiet: quiet)
        defer { progress.finish() }
        switch source {
        case .archive(let input):
            var visitor = TablesVisitor(writer: writer)
            let summary = try ArchiveReader(input, limits: limits, progress: progress.update).read(into: &visitor)
            progress.finish()
            for warning in summary.warnings { console.warn(warning.message) }
        case .store(let store):
            console.announceUpgrade(of: store, quiet: quiet)
            try PulseStore.readSnapshot(storeDirectory: store, limits: limits, warn: { console.warn($0.message) }) { content in
                try writer.write(content) { rows in progress.update(rows: rows, done: 0, total: 0) }
            }
        }
        let result = try writer.commit()
        progress.finish()
        if json {
            try console.out(JSONReport.object([
                ("path", .string(result.path)),
                ("format", .string(result.format.rawValue)),
                ("tables", .counts(result.rows)),
            ]).text)
        } else {
            if !quiet { console.err("Wrote \(ProgressLine.grouped(result.rows.values.reduce(0, +))) rows in \(result.rows.count) files (\(result.format.rawValue)) and tables.json") }
            try console.outPath(result.path)
        }
        return 0
    }
}
