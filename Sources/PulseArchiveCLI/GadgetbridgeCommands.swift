import Foundation
import PulseArchive
import PulseGadgetbridge
import PulseStore
import PulseSystem

/// `import` and `inspect` of a Gadgetbridge database or backup ZIP (docs/gadgetbridge.md):
/// the file is recognised by content, so both commands branch here before the archive reader.
enum GadgetbridgeCommands {
    /// The known loss said once in every text report (spec §3.11).
    static let stepsCaveat = "Steps: Gadgetbridge kept one quarter-hour per hour, so imported days undercount steps (by up to about 75 %)."

    /// The tables whose counts have `overlapping` (sleep only).
    static let sleepTables: Set<ColmiTable> = [.sleepSession, .sleepStage]

    /// Said when the database's `-wal` was read with it (docs/gadgetbridge.md).
    static let walNote = "Read with its write-ahead log (the -wal file beside the database), from a private copy; the files were not changed."

    /// What `import` or `inspect` was given.
    enum Source {
        case gadgetbridge(GadgetbridgeDatabase)
        /// An archive: the input as given, or standard input with the bytes looked at put back.
        case archive(ArchiveInput)
    }

    /// Tells a Gadgetbridge file from an archive by its first bytes, and opens it: a path is
    /// looked at without being read; standard input is read, and a Gadgetbridge file on it
    /// spooled into a private copy (SQLite needs a file), else its first bytes are put back.
    static func source(_ file: String, input: ArchiveInput, limits: ArchiveLimits) throws -> Source {
        let stream: SystemFile
        if let opened = input.openStream {
            stream = opened
        } else if file == "-" {
            stream = try SystemFile.standardInput()
        } else {
            return GadgetbridgeFile.form(of: file) == nil ? .archive(input) : .gadgetbridge(try GadgetbridgeFile.open(file, limits: limits))
        }
        let head = try stream.read(upTo: GadgetbridgeFile.headLength)
        guard GadgetbridgeFile.form(ofHead: head) != nil else { return .archive(input.reading(after: head)) }
        return .gadgetbridge(try GadgetbridgeFile.open(streamHead: head, rest: stream, name: input.name, limits: limits))
    }

    static func importHistory(_ command: ImportCommand, database: GadgetbridgeDatabase) throws -> Int32 {
        let console = command.console
        let form = database.form
        // The rows' one `now` follows SOURCE_DATE_EPOCH, as an export's time does (two imports
        // of one file compare row for row); the backfill's today and the backup's name do not.
        let stamp = try ArgumentValues.exportTime(environment: console.environment)
        let mapper = GadgetbridgeMapper(database, timeZone: command.zone, now: stamp)
        let scoring = ProgressLine("Scoring readiness", unit: "days", console: console, quiet: command.quiet)
        defer { scoring.finish() }
        var mapping = GadgetbridgeMapping()
        let (result, overlap) = try PulseStore.importRingHistory(storeDirectory: command.store, options: ImportOptions(
            mode: command.mode, appVersion: "pulse-archive \(PulseArchiveCommand.version)", now: ArgumentValues.nowMillis(),
            limits: command.limits, backfill: command.backfill, backfillProgress: scoring.update), stamp: stamp, timeZone: command.zone) { visitor in
            mapping = try mapper.map(into: &visitor)
        }
        scoring.finish()
        let tables = counts(mapping, overlap: overlap)
        let devices = database.devices.map { device -> JSONReport in
            var members: [(String, JSONReport)] = [("identifier", .string(device.identifier)), ("typeName", .string(device.typeName)),
                                                   ("name", .string(device.name))]
            if let id = mapping.deviceIDs[device.id] {
                members += [("status", .string("imported")), ("deviceId", .string(id)), ("created", .bool(overlap.keptDevices.contains(id)))]
            } else {
                members += [("status", .string("ignored")), ("reason", .string("not a Colmi or Yawell ring"))]
            }
            return .object(members + [("rows", .int(device.rows))])
        }
        let json: [(String, JSONReport)] = [
            ("updated", .object([("activityDailies", .int(overlap.updatedDailies))])),
            ("gadgetbridge", .object([
                ("form", .string(form.rawValue)), ("writeAheadLog", .bool(database.withWriteAheadLog)),
                ("schemaVersion", .int(database.schemaVersion)), ("timezone", .string(command.zoneName)),
                ("devices", .array(devices)),
                ("tables", .object(ColmiTable.allCases.map { table in
                    let c = tables[table]!
                    let overlapping: [(String, JSONReport)] = Self.sleepTables.contains(table) ? [("overlapping", .int(c.overlapping))] : []
                    return (table.rawValue, .object([("read", .int(c.read)), ("imported", .int(c.imported)), ("duplicate", .int(c.duplicate))]
                                                    + overlapping + [("invalid", .int(c.invalid)), ("unmapped", .int(c.unmapped))]))
                })),
            ])),
        ]
        var text = "\n\nGadgetbridge \(form.rawValue) (schema \(database.schemaVersion)), local dates in \(command.zoneName):\n"
        text += Formatting.columns(["table", "read", "imported", "duplicate", "invalid", "unmapped"], ColmiTable.allCases.map { table in
            let c = tables[table]!
            return [table.rawValue] + [c.read, c.imported, c.duplicate, c.invalid, c.unmapped].map(ProgressLine.grouped)
        }, numeric: [1, 2, 3, 4, 5])
        for device in database.devices where mapping.deviceIDs[device.id] == nil {
            text += "\nIgnored \(shown(device.name)) (\(shown(device.typeName)), \(shown(device.identifier))): not a Colmi or Yawell ring, \(ProgressLine.grouped(device.rows)) rows"
        }
        if database.withWriteAheadLog { text += "\n" + walNote }
        if !overlap.overlappingSessions.isEmpty {
            text += "\nNot imported: \(overlap.overlappingSessions.count) sleep sessions (\(ProgressLine.grouped(tables[.sleepStage]!.overlapping)) stage rows) "
                + "overlapping a night already in the store that they run past (a night split across two exports); the store's nights are never changed"
        }
        if overlap.updatedDailies > 0 { text += "\nCompleted the daily step totals of \(overlap.updatedDailies) days the store already had" }
        text += "\n" + stepsCaveat
        try command.report(result, extraJSON: json, extraText: text)
        return 0
    }

    /// The mapper's counts with what the store's overlap rule found already present moved to
    /// `duplicate`; sleep rows counted with the session they went into.
    static func counts(_ mapping: GadgetbridgeMapping, overlap: RingHistoryOverlap) -> [ColmiTable: ColmiTableCounts] {
        var tables = mapping.tables
        for kind in GadgetbridgeMapper.MeasurementKind.all {
            let duplicate = overlap.measurements[kind.kindRaw] ?? 0
            tables[kind.table]!.imported -= duplicate
            tables[kind.table]!.duplicate += duplicate
        }
        tables[.activity]!.imported -= overlap.buckets
        tables[.activity]!.duplicate += overlap.buckets
        for (id, rows) in mapping.sleepRows {
            if overlap.keptSessions.contains(id) {
                tables[.sleepSession]!.imported += rows.sessions
                tables[.sleepStage]!.imported += rows.stages
            } else if overlap.overlappingSessions.contains(id) {
                tables[.sleepSession]!.overlapping += rows.sessions
                tables[.sleepStage]!.overlapping += rows.stages
            } else {
                tables[.sleepSession]!.duplicate += rows.sessions
                tables[.sleepStage]!.duplicate += rows.stages
            }
        }
        return tables
    }

    /// `inspect` of a Gadgetbridge file (§3.10): checked as import checks it, without a store.
    static func inspect(_ database: GadgetbridgeDatabase, json: Bool, console: Console) throws -> Int32 {
        let form = database.form
        let tables = try database.tableExtents()
        // The import's own mapping, its rows discarded: inspect and import agree on what is invalid.
        var discard = DiscardingVisitor()
        let invalid = try GadgetbridgeMapper(database, timeZone: TimeZone(identifier: "UTC")!, now: 0).map(into: &discard).tables.mapValues(\.invalid)
        if json {
            try console.out(JSONReport.object([
                ("dialect", .string("gadgetbridge")), ("form", .string(form.rawValue)), ("writeAheadLog", .bool(database.withWriteAheadLog)),
                ("schemaVersion", .int(database.schemaVersion)),
                ("devices", .array(database.devices.map { device in
                    .object([("identifier", .string(device.identifier)), ("typeName", .string(device.typeName)), ("name", .string(device.name)),
                             ("status", .string(device.isColmiRing ? "imported" : "ignored")), ("rows", .int(device.rows))])
                })),
                ("tables", .object(ColmiTable.allCases.map { table in
                    let extent = tables[table]!
                    return (table.rawValue, .object([("rows", .int(extent.rows)), ("invalid", .int(invalid[table] ?? 0)), ("first", extent.first.map { .string(iso($0)) } ?? .null),
                                                     ("last", extent.last.map { .string(iso($0)) } ?? .null)]))
                })),
                ("bytes", .object([("compressed", .int(database.bytes.compressed)), ("uncompressed", .int(database.bytes.uncompressed))])),
            ]).text)
        } else {
            var text = "\(database.name): Gadgetbridge \(form.rawValue), schema \(database.schemaVersion), \(ProgressLine.grouped(Int(database.bytes.uncompressed))) bytes\n"
            text += Formatting.columns(["device", "type", "identifier", "rows", "status"], database.devices.map { device in
                [shown(device.name), shown(device.typeName), shown(device.identifier), ProgressLine.grouped(device.rows), device.isColmiRing ? "imported" : "ignored"]
            }, numeric: [3])
            text += "\n" + Formatting.columns(["table", "rows", "invalid", "first", "last"], ColmiTable.allCases.map { table in
                let extent = tables[table]!
                return [table.rawValue, ProgressLine.grouped(extent.rows), ProgressLine.grouped(invalid[table] ?? 0),
                        extent.first.map(iso) ?? "-", extent.last.map(iso) ?? "-"]
            }, numeric: [1, 2])
            if database.withWriteAheadLog { text += "\n" + walNote }
            text += "\n" + stepsCaveat
            try console.out(text)
        }
        return 0
    }

    /// A device's text from the file, every control character (newline and tab too, which would
    /// break the report's lines) shown as its escape.
    static func shown(_ text: String) -> String {
        ShownText.escapingControls(text.replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\t", with: "\\t"))
    }

    private static func iso(_ milliseconds: Int64) -> String {
        (try? ArchiveDate.format(milliseconds)) ?? String(milliseconds)
    }
}

/// Takes the mapped rows and keeps none: `inspect` wants only the mapping's counts.
private struct DiscardingVisitor: ArchiveVisitor {
    mutating func visit(row: ArchiveRow, at index: Int, of table: ArchiveTable) throws {}
}
