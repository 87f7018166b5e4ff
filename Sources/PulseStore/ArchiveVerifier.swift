import Foundation
import PulseArchive
import PulseDocuments
import Readiness

/// Writes a store's archive into a pipe on a thread of its own (the round trip of `verify`).
private final class ExportJob: @unchecked Sendable {
    let store: PulseStore
    let pipe: BytePipe
    let exportedAt: Int64
    let done = DispatchSemaphore(value: 0)
    /// Set before `done` is signalled.
    var error: Error?

    init(store: PulseStore, pipe: BytePipe, exportedAt: Int64) {
        self.store = store
        self.pipe = pipe
        self.exportedAt = exportedAt
    }

    func run() {
        do {
            _ = try ArchiveWriter.write(
                StoreContent(database: store.database, schema: "main",
                             documents: StoreDocuments.Content(tree: try DocumentTree(scanning: store.directory))),
                options: ArchiveWriterOptions(formatVersion: ArchiveFormat.newestVersion, appVersion: "verify", exportedAt: exportedAt),
                to: pipe)
        } catch {
            self.error = error
            pipe.fail(error)
        }
        done.signal()
    }
}

/// One finding of `verify`.
public struct VerifyProblem: Sendable, Equatable {
    public enum Severity: String, Sendable { case error, warning }
    public var severity: Severity
    /// A table key, `settings`, `attachments`, `documents`, or nil for the file as a whole.
    public var table: String?
    public var message: String
}

/// Rows (or documents) that differ between an archive and a store.
public struct StoreDifference: Sendable, Equatable {
    /// In the archive, not in the store.
    public var missing = 0
    /// In the store, not in the archive.
    public var extra = 0
    /// In both under the same key, with different values.
    public var changed = 0

    public var isEmpty: Bool { missing == 0 && extra == 0 && changed == 0 }
}

public struct VerifyReport: Sendable {
    public var problems: [VerifyProblem] = []
    /// Rows per table; documents as `splits`, `workouts`, `stubs`.
    public var tables: [String: Int] = [:]
    /// Per table (and `splits`, `workouts`, `stubs`, `settings`, `attachments`), with `--store`.
    public var storeDiff: [String: StoreDifference]?
    /// Documents by class: `current`, `older`, `newer`, `unreadable`, `stub`.
    public var documentClasses: [String: Int] = [:]
    /// Whether the round trip through a temporary store ran, and held every row and document.
    public var roundTrip: Bool?
    public var summary: ArchiveSummary?

    /// Sound: no error (warnings allowed).
    public var ok: Bool { !problems.contains { $0.severity == .error } }

    mutating func error(_ table: String?, _ message: String) { problems.append(VerifyProblem(severity: .error, table: table, message: message)) }
    mutating func warning(_ table: String?, _ message: String) { problems.append(VerifyProblem(severity: .warning, table: table, message: message)) }
}

/// `verify`: checks an archive as a CI job needs it checked (the container, the structure, the
/// references, a round trip through a temporary store, and optionally a store), reporting every
/// problem rather than the first. It never says "ok" about a file that would not restore.
public enum ArchiveVerifier {
    public static func verify(_ archivePath: String, store storeDirectory: String?, timeZone: TimeZone = .current,
                              limits: ArchiveLimits = .standard, progress: ((ReadProgress) -> Void)? = nil) throws -> VerifyReport {
        var report = VerifyReport()
        let scratch = try PrivateFiles.temporaryDirectory(prefix: "pulse-archive-verify")
        defer { PrivateFiles.remove(scratch) }
        // The round trip's temporary store; the archive is staged inside it so that it can be
        // applied exactly as `import` applies it.
        let temporaryStore = try PulseStore.open(scratch + "/store", create: true)
        let staging = try StagingArea(directory: scratch + "/store/.staging-verify")

        // 1–2. Container and structure, every problem collected.
        let reader = ArchiveReader(path: archivePath, limits: limits, progress: progress)
        let summary: ArchiveSummary
        do {
            summary = try staging.stageCollectingProblems(reader)
        } catch let interrupted as ArchiveReader.Interrupted {
            for problem in interrupted.problems { report.error(problem.table, problem.message) }
            report.error(nil, describe(interrupted.error))
            report.tables = interrupted.summary.rowsFound
            return report
        } catch let error as ArchiveError {
            report.error(nil, error.message)
            return report
        }
        report.summary = summary
        report.tables = summary.rowsFound.merging(summary.hasDocuments ? [
            "splits": summary.documentCounts["splits"] ?? 0, "workouts": summary.documentCounts["workouts"] ?? 0,
            "stubs": summary.documentCounts["stubs"] ?? 0,
        ] : [:]) { a, _ in a }
        if !summary.isCompressed {
            report.warning(nil, "plain JSON: the file carries no checksum, so damage inside a value cannot be detected; pulse-archive export writes gzip")
        }
        for problem in summary.problems { report.error(problem.table, problem.message) }
        for mismatch in summary.countMismatches {
            let declared = mismatch.declared.map { "declares \($0) rows" } ?? "declares no count"
            report.error(mismatch.table, "\(mismatch.table): the file \(declared) but holds \(mismatch.found): rows were lost or added after the count")
        }
        for warning in summary.warnings { report.warning(warning.table, warning.message) }
        try checkSettings(staging, &report)
        try classifyDocuments(staging, &report)

        // 3. References: warnings, since the app keeps orphans.
        try checkReferences(staging.database, &report)
        try checkReadinessDays(staging.database, timeZone: timeZone, &report)

        // 5. Against a store, before the round trip consumes the staged documents.
        if let storeDirectory {
            report.storeDiff = try PulseStore.withExclusiveAccess(storeDirectory, create: false) { store in
                try compare(staging, summary: summary, with: store)
            }
            for (table, difference) in report.storeDiff!.sorted(by: { $0.key < $1.key }) where !difference.isEmpty {
                report.error(table, "\(table) differs from the store: \(difference.missing) missing from the store, \(difference.extra) only in the store, \(difference.changed) changed")
            }
        }

        // 4. Round trip: import into a temporary store, export again, compare.
        if report.ok {
            report.roundTrip = try roundTrip(staging, summary: summary, through: temporaryStore, scratch: scratch, &report)
        }
        return report
    }

    static func describe(_ error: Error) -> String {
        switch error {
        case let error as ArchiveError: return error.message
        case let error as StoreError: return error.message
        default: return "\(error)"
        }
    }

    // MARK: - Structure

    private static func checkSettings(_ staging: StagingArea, _ report: inout VerifyReport) throws {
        let settings = try staging.database.prepare(#"SELECT "key", "value" FROM "settings" ORDER BY "key""#)
        while try settings.step() {
            let key = settings.text(at: 0)
            if (try? JSONNode.parse(Array(settings.text(at: 1).utf8))) == nil {
                report.error("settings", "settings.\(key): the stored blob is not valid JSON")
            }
        }
    }

    private static func classifyDocuments(_ staging: StagingArea, _ report: inout VerifyReport) throws {
        let tree = try DocumentTree(scanning: staging.archiveTree)
        for path in tree.documents {
            let document = try tree.classify(path)
            report.documentClasses[document.state.label, default: 0] += 1
            switch document.state {
            case .newer(let version):
                report.warning("documents", "\(path): schema version \(version) is newer than this tool reads; it is carried byte for byte (quarantined)")
            case .unreadable(let reason):
                report.warning("documents", "\(path): unreadable (\(reason)); it is carried byte for byte")
            default:
                break
            }
        }
    }

    /// Child rows whose parent is not in the archive.
    static let references: [(child: String, column: String, parent: String, what: String)] = [
        ("sleepStageBlocks", "sessionId", "sleepSessions", "a sleep session"),
        ("activitySamples", "sessionId", "activitySessions", "a workout"),
        ("activityGpsPoints", "sessionId", "activitySessions", "a workout"),
        ("activityEvents", "sessionId", "activitySessions", "a workout"),
        ("activitySensorPollEvents", "sessionId", "activitySessions", "a workout"),
        ("coachMessages", "conversationId", "coachConversations", "a conversation"),
        ("coachToolCalls", "conversationId", "coachConversations", "a conversation"),
        ("measurements", "activitySessionId", "activitySessions", "a workout"),
        ("measurements", "rawPacketId", "rawPackets", "a raw packet"),
    ]

    private static func checkReferences(_ database: SQLiteDatabase, _ report: inout VerifyReport) throws {
        for reference in references {
            let child = StoreSchema.quoted(reference.child), column = StoreSchema.quoted(reference.column)
            let orphans = try database.integer("""
                SELECT count(*) FROM \(child) c WHERE c.\(column) IS NOT NULL
                AND NOT EXISTS (SELECT 1 FROM \(StoreSchema.quoted(reference.parent)) p WHERE p."id" = c.\(column))
                """)
            if orphans > 0 {
                report.warning(reference.child, "\(reference.child): \(orphans) row\(orphans == 1 ? "" : "s") refer by \(reference.column) to \(reference.what) not in the archive (kept, as the app keeps them)")
            }
        }
    }

    private static func checkReadinessDays(_ database: SQLiteDatabase, timeZone: TimeZone, _ report: inout VerifyReport) throws {
        let calendar = LocalCalendar(timeZone: timeZone)
        let dates = try database.prepare(#"SELECT "date" FROM "readinessDailies""#)
        var perDay: [Int64: Int] = [:]
        while try dates.step() { perDay[calendar.startOfDay(dates.int64(at: 0)), default: 0] += 1 }
        let crowded = perDay.values.filter { $0 > 1 }.count
        if crowded > 0 {
            report.warning("readinessDailies", "readinessDailies: \(crowded) day\(crowded == 1 ? " has" : "s have") more than one row in \(timeZone.identifier); the latest computedAt is the day's row")
        }
    }

    // MARK: - Comparing two databases

    /// The key-based difference of each table between `main` and the attached `other`.
    static func tableDifferences(_ database: SQLiteDatabase, other: String) throws -> [String: StoreDifference] {
        var result: [String: StoreDifference] = [:]
        var tables = ArchiveTable.all.map { ($0.key, $0.uniqueKey, $0.fields.map(\.name)) }
        for table in ExtensionTable.allCases { tables.append((table.rawValue, table.uniqueKey, [table.uniqueKey, "row"])) }
        tables.append(("settings", "key", ["key", "value"]))
        tables.append(("attachments", "file", ["file", "contents"]))
        for (name, key, columns) in tables {
            let t = StoreSchema.quoted(name), k = StoreSchema.quoted(key)
            let same = columns.map { "a.\(StoreSchema.quoted($0)) IS b.\(StoreSchema.quoted($0))" }.joined(separator: " AND ")
            var difference = StoreDifference()
            difference.missing = Int(try database.integer("SELECT count(*) FROM main.\(t) a WHERE NOT EXISTS (SELECT 1 FROM \(other).\(t) b WHERE b.\(k) = a.\(k))"))
            difference.extra = Int(try database.integer("SELECT count(*) FROM \(other).\(t) b WHERE NOT EXISTS (SELECT 1 FROM main.\(t) a WHERE a.\(k) = b.\(k))"))
            difference.changed = Int(try database.integer("SELECT count(*) FROM main.\(t) a JOIN \(other).\(t) b ON a.\(k) = b.\(k) WHERE NOT (\(same))"))
            result[name] = difference
        }
        return result
    }

    /// The difference between two document trees, by path, in `splits`, `workouts`, `stubs`.
    static func documentDifferences(_ archive: DocumentTree, _ store: DocumentTree) throws -> [String: StoreDifference] {
        var result = ["splits": StoreDifference(), "workouts": StoreDifference(), "stubs": StoreDifference()]
        let ours = Set(archive.documents), theirs = Set(store.documents)
        for path in ours.subtracting(theirs) { result[path.group]!.missing += 1 }
        for path in theirs.subtracting(ours) { result[path.group]!.extra += 1 }
        for path in ours.intersection(theirs) {
            let a = try archive.read(path), b = try store.read(path)
            if a != b, (try? JSONNode.parse(a)) == nil || (try? JSONNode.parse(a)) != (try? JSONNode.parse(b)) {
                result[path.group]!.changed += 1
            }
        }
        return result
    }

    private static func compare(_ staging: StagingArea, summary: ArchiveSummary, with store: PulseStore) throws -> [String: StoreDifference] {
        try staging.database.prepare("ATTACH DATABASE ? AS store").run([.string(store.databasePath)])
        defer { try? staging.database.execute("DETACH DATABASE store") }
        var differences = try tableDifferences(staging.database, other: "store")
        if summary.hasDocuments {
            let documents = try documentDifferences(try DocumentTree(scanning: staging.archiveTree), try DocumentTree(scanning: store.directory))
            differences.merge(documents) { a, _ in a }
        }
        return differences
    }

    // MARK: - Round trip

    /// Applies the staged archive to an empty temporary store exactly as `import` does, then
    /// exports that store through an in-memory pipe into a reader on this thread, comparing
    /// everything read back with the store as it streams.
    private static func roundTrip(_ staging: StagingArea, summary: ArchiveSummary, through store: PulseStore, scratch: String,
                                  _ report: inout VerifyReport) throws -> Bool {
        do {
            _ = try store.applyStaged(staging, summary: summary, mode: .replace, intoEmptyStore: true, now: 0)
        } catch {
            report.error(nil, "round trip: the archive could not be restored: \(describe(error))")
            return false
        }
        let pipe = BytePipe()
        // The exporting thread uses the store's connection; this thread reads back through a
        // connection of its own (WAL lets readers run beside it).
        let export = ExportJob(store: store, pipe: pipe, exportedAt: summary.exportedAt)
        let exporter = Thread { export.run() }
        exporter.start()
        var comparer = try RoundTripComparer(store: store, database: try SQLiteDatabase(path: store.databasePath, create: false))
        var readBack: ArchiveSummary?
        var readError: Error?
        do {
            readBack = try ArchiveReader(plainJSON: pipe, name: "the round-trip export").read(into: &comparer)
        } catch {
            readError = error
            pipe.fail(error)
        }
        export.done.wait()
        if let error = export.error ?? readError {
            report.error(nil, "round trip: the restored archive could not be exported and read back: \(describe(error))")
            return false
        }
        try comparer.finish(summary: readBack!)
        for (table, count) in comparer.differences.sorted(by: { $0.key < $1.key }) {
            report.error(table, "round trip: \(count) \(table == "documents" ? "documents" : "rows") of \(table) do not come back as they were read")
        }
        return comparer.differences.isEmpty
    }
}
