import Foundation
import Testing
@testable import PulseArchive
@testable import PulseDemo
@testable import PulseStore
import PulseSQLite
import PulseSystem
@testable import PulseTestSupport

/// Everything a store holds, for equality checks.
struct StoreSnapshot: Equatable {
    var rows: [String: [ArchiveRow]] = [:]
    var settings: [String: String] = [:]
    var attachments: [String: [UInt8]] = [:]
    /// Extension-table rows, as compact JSON text.
    var extensions: [String: Set<String>] = [:]

    init(store directory: String) throws {
        let store = try PulseStore.open(directory, create: false)
        for table in ExtensionTable.allCases {
            var rows = Set<String>()
            try StoreContent(database: store.database, schema: "main").forEachExtensionRow(table) { rows.insert($0.compactText) }
            extensions[table.rawValue] = rows
        }
        for table in ArchiveTable.all {
            var rows: [ArchiveRow] = []
            try store.forEachRow(of: table) { rows.append($0) }
            self.rows[table.key] = rows
        }
        settings = try store.settings()
        attachments = try store.attachments()
    }

    init(archive path: String) throws {
        var visitor = CollectingVisitor()
        try ArchiveReader(path: path).read(into: &visitor)
        rows = visitor.rows
        for table in ExtensionTable.allCases { extensions[table.rawValue] = Set(visitor.extensions[table.rawValue] ?? []) }
        for table in ArchiveTable.all where rows[table.key] == nil { rows[table.key] = [] }
        settings = visitor.settings
        attachments = visitor.attachments
    }

    /// The same rows regardless of order.
    func sameContent(as other: StoreSnapshot) -> Bool {
        guard settings == other.settings, attachments == other.attachments, extensions == other.extensions else { return false }
        return ArchiveTable.all.allSatisfy { table in
            Set(rows[table.key] ?? []) == Set(other.rows[table.key] ?? []) && (rows[table.key] ?? []).count == (other.rows[table.key] ?? []).count
        }
    }
}

enum StoreFixtures {
    static let end = DateComponents(year: 2026, month: 3, day: 15)
    static let zone = TimeZone(identifier: "Europe/Berlin")!

    /// A demo store of `days` days in `directory`.
    static func demoStore(_ directory: String, days: Int = 14, seed: UInt64 = 3, rawPacketsPerDay: Int = 4) throws {
        var ring = SyntheticRing(options: DemoOptions(days: days, seed: seed, endDay: end, timeZone: zone, rawPacketsPerDay: rawPacketsPerDay))
        _ = try ring.fill(storeDirectory: directory)
    }

    static func export(_ store: String, to path: String, formatVersion: Int64 = 2) throws -> ExportResult {
        try PulseStore.exportArchive(storeDirectory: store, to: path,
                                     options: ExportOptions(formatVersion: formatVersion, appVersion: "tests", exportedAt: 1_773_600_000_000))
    }

    @discardableResult
    /// Imports without the readiness backfill unless one is given: these fixtures test data fidelity.
    static func importArchive(_ path: String, into store: String, mode: ImportMode? = nil, backfill: BackfillRequest? = nil) throws -> ImportResult {
        try PulseStore.importArchive(path, storeDirectory: store,
                                     options: ImportOptions(mode: mode, appVersion: "tests", now: 1_773_700_000_000, backfill: backfill))
    }

    static func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    /// A database's schema version and every archive row with its rowid first, read without
    /// opening it as a store (which would migrate it).
    static func rawContent(of databasePath: String) throws -> (version: Int64, rows: [String: [[FieldValue]]]) {
        let database = try SQLiteDatabase(path: databasePath, create: false)
        var rows: [String: [[FieldValue]]] = [:]
        for table in ArchiveTable.all {
            let select = try database.prepare("SELECT rowid, \(StoreSchema.columnList(table)) FROM \(StoreSchema.quoted(table.key)) ORDER BY rowid")
            while try select.step() {
                rows[table.key, default: []].append([.int(select.int64(at: 0))] + table.fields.enumerated().map {
                    select.value(at: Int32($0.offset + 1), as: $0.element.type)
                })
            }
        }
        return (try database.integer("PRAGMA user_version"), rows)
    }

    /// A store as the tool left it before `uniqueKeysAsIndexes` (schema 5), holding the rows of
    /// the store in `source`.
    static func schema5Store(copying source: String, into directory: String) throws {
        try PrivateFiles.createDirectory(directory)
        try PrivateFiles.touch(directory + "/pulse.sqlite")
        let database = try SQLiteDatabase(path: directory + "/pulse.sqlite", create: false)
        try PulseStore.configure(database, durable: true)
        try StoreMigration.migrate(database, through: 5)
        try database.prepare("ATTACH DATABASE ? AS source").run([.string(source + "/pulse.sqlite")])
        for table in ArchiveTable.all {
            let columns = StoreSchema.columnList(table), name = StoreSchema.quoted(table.key)
            try database.execute("INSERT INTO main.\(name) (\(columns)) SELECT \(columns) FROM source.\(name) ORDER BY rowid")
        }
        try database.execute("INSERT INTO main.settings SELECT * FROM source.settings")
        try database.execute("DETACH DATABASE source")
        database.close()
    }

    static func mode(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? NSNumber)?.intValue ?? -1
    }
}
