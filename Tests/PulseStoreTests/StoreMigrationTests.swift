import Foundation
import Testing
@testable import PulseArchive
@testable import PulseStore
import PulseSQLite
import PulseSystem
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// The store's schema history is frozen: each released migration creates today what it created
/// when it was released, and a store written by any released version upgrades to the current
/// schema keeping every row and rowid. The stores in `Tests/GoldenStores` were written by the
/// released tools themselves and are never regenerated (`Tests/GoldenStores/README.md`).
@Suite("Frozen migrations and the stores of released versions")
struct StoreMigrationTests {
    static let goldenDirectory = Repository.root + "/Tests/GoldenStores"

    /// The golden stores, with the schema version each was written at (`schema-<n>-<commit>`).
    static var goldenStores: [(version: Int, path: String)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: goldenDirectory)) ?? []
        return names.filter { $0.hasSuffix(".sqlite") }.sorted().compactMap { name in
            guard let version = Int(name.split(separator: "-")[1]) else { return nil }
            return (version, goldenDirectory + "/" + name)
        }
    }

    /// Every schema object of a database, as `schema.sql` lists them: ordered by type and name,
    /// each with its table and its SQL (none for the indexes SQLite makes for a constraint).
    static func schemaDump(_ database: SQLiteDatabase) throws -> String {
        var text = "-- PRAGMA user_version = \(try database.integer("PRAGMA user_version"))\n"
        let objects = try database.prepare("SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema ORDER BY type, name")
        while try objects.step() {
            let sql = objects.text(at: 3)
            text += "\n-- \(objects.text(at: 0)) \(objects.text(at: 1)) on \(objects.text(at: 2))\n" + (sql.isEmpty ? "" : sql + ";\n")
        }
        return text
    }

    /// An empty database brought through the first `count` migrations.
    static func migratedEmpty(through count: Int, in dir: TemporaryDirectory) throws -> SQLiteDatabase {
        let path = dir.file("empty-\(count).sqlite")
        try PrivateFiles.touch(path)
        let database = try SQLiteDatabase(path: path, create: false)
        try StoreMigration.migrate(database, through: count)
        return database
    }

    /// Every row of every table but the migration record, with its rowid, each value quoted as
    /// SQL writes it (so a type or a byte that changed shows).
    static func everyRow(_ database: SQLiteDatabase) throws -> [String: [String]] {
        var tables: [String] = []
        let names = try database.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name != 'schemaMigrations' ORDER BY name")
        while try names.step() { tables.append(names.text(at: 0)) }
        var rows: [String: [String]] = [:]
        for table in tables {
            var columns: [String] = []
            let info = try database.prepare("SELECT name FROM pragma_table_info(?)")
            try info.bind([.string(table)])
            while try info.step() { columns.append(StoreSchema.quoted(info.text(at: 0))) }
            let quotedValues = (["rowid"] + columns).map { "quote(\($0))" }.joined(separator: " || ' | ' || ")
            let select = try database.prepare("SELECT \(quotedValues) FROM \(StoreSchema.quoted(table)) ORDER BY rowid")
            rows[table] = []
            while try select.step() { rows[table]!.append(select.text(at: 0)) }
        }
        return rows
    }

    @Test("the schema that migrations 1…n create on an empty store is the checked-in schema.sql")
    func schemaOfANewStore() throws {
        let dir = TemporaryDirectory()
        let dump = try Self.schemaDump(try Self.migratedEmpty(through: StoreMigration.all.count, in: dir))
        let expected = try String(contentsOfFile: Self.goldenDirectory + "/schema.sql", encoding: .utf8)
        #expect(dump == expected)
    }

    @Test("each released store has the schema that migrations 1…k create today: no released step changed")
    func releasedStepsAreFrozen() throws {
        let stores = Self.goldenStores
        #expect(stores.map(\.version) == [2, 3, 4, 5, 6, 7])
        let dir = TemporaryDirectory()
        for (version, path) in stores {
            let copy = dir.file("golden-\(version).sqlite")
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            let golden = try Self.schemaDump(try SQLiteDatabase(path: copy, create: false, access: .readOnly))
            #expect(golden == (try Self.schemaDump(try Self.migratedEmpty(through: version, in: dir))), "schema \(version)")
        }
    }

    @Test("a store written by each released version upgrades to the current schema with every row and rowid kept")
    func releasedStoresUpgrade() throws {
        let current = try String(contentsOfFile: Self.goldenDirectory + "/schema.sql", encoding: .utf8)
        for (version, path) in Self.goldenStores {
            let dir = TemporaryDirectory()
            try PrivateFiles.createDirectory(dir.file("s"))
            try FileManager.default.copyItem(atPath: path, toPath: dir.file("s/pulse.sqlite"))
            let before = try Self.everyRow(try SQLiteDatabase(path: dir.file("s/pulse.sqlite"), create: false, access: .readOnly))
            #expect(PulseStore.needsUpgrade(dir.file("s")) == (version < StoreMigration.all.count))

            // The way every command opens a store that may need upgrading.
            try PulseStore.withExclusiveAccess(dir.file("s"), create: false) { _ in }

            let database = try SQLiteDatabase(path: dir.file("s/pulse.sqlite"), create: false)
            let after = try Self.everyRow(database)
            #expect(try Self.schemaDump(database) == current, "schema \(version)")
            #expect(before.values.reduce(0) { $0 + $1.count } > 700, "schema \(version): the golden store holds rows")
            for (table, rows) in before {
                #expect(after[table] == rows, "schema \(version): \(table)")
            }
            var applied: [String] = []
            let names = try database.prepare(#"SELECT "name" FROM "schemaMigrations" ORDER BY rowid"#)
            while try names.step() { applied.append(names.text(at: 0)) }
            #expect(applied == StoreMigration.all.map(\.name), "schema \(version)")
        }
    }

    @Test("the migrated store has a column per field of every archive table as the code has it: a field added without a migration fails here")
    func migrationsCoverTheTables() throws {
        let dir = TemporaryDirectory()
        let database = try Self.migratedEmpty(through: StoreMigration.all.count, in: dir)
        for table in ArchiveTable.all {
            let info = try database.prepare(#"SELECT name, type, "notnull" FROM pragma_table_info(?) ORDER BY cid"#)
            try info.bind([.string(table.key)])
            var columns: [String] = []
            while try info.step() { columns.append("\(info.text(at: 0)) \(info.text(at: 1)) \(info.int64(at: 2))") }
            #expect(columns == table.fields.map { "\($0.name) \(StoreSchema.columnType($0.type)) \($0.isOptional ? 0 : 1)" }, "\(table.key)")
        }
    }
}
