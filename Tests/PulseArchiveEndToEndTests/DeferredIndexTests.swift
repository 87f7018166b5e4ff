import Foundation
import Testing
@testable import PulseArchive
@testable import PulseStore
import PulseSQLite
import PulseSystem
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// The store's indexes, which an import builds after loading the rows.
@Suite("Indexes built after the rows")
struct DeferredIndexTests {
    /// Every schema object but its page numbers: two databases with equal schemas agree here.
    private func schema(_ path: String) throws -> [String] {
        let database = try SQLiteDatabase(path: path, create: false)
        let objects = try database.prepare("SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema ORDER BY type, name")
        var found: [String] = []
        while try objects.step() {
            found.append((0..<4).map { objects.text(at: Int32($0)) }.joined(separator: " | "))
        }
        return found
    }

    @Test("a store left at schema 5 is migrated to unique indexes: rows, rowids and the other indexes kept, repeats still refused")
    func migrationToUniqueIndexes() throws {
        let dir = TemporaryDirectory()
        try PrivateFiles.touch(dir.file("old.sqlite"))
        let database = try SQLiteDatabase(path: dir.file("old.sqlite"), create: false)
        try StoreMigration.migrate(database, through: 5)
        let writer = try StoreRowWriter(database: database)
        let rows = [7, 3, 9].map { RowFactory.minimal(.measurements, index: $0) }
        for row in rows { try writer.add(row, to: .measurements) }
        try database.execute("DELETE FROM measurements WHERE rowid = 2")  // a gap the rebuild must keep

        try StoreMigration.migrate(database)
        let kept = try StoreFixtures.rawContent(of: dir.file("old.sqlite"))
        #expect(kept.version == Int64(StoreMigration.all.count))
        // Written into schema 5's REAL column, negative zero was already zero.
        let signLost = rows[2].values.map { $0 == .double(-0.0) ? FieldValue.double(0) : $0 }
        #expect(kept.rows["measurements"] == [[.int(1)] + rows[0].values, [.int(3)] + signLost])
        #expect { try writer.add(rows[0], to: .measurements) } throws: { ($0 as? SQLiteError)?.kind == .duplicateKey }

        try PrivateFiles.touch(dir.file("new.sqlite"))
        try StoreMigration.migrate(try SQLiteDatabase(path: dir.file("new.sqlite"), create: false))
        let migrated = try schema(dir.file("old.sqlite"))
        #expect(migrated == (try schema(dir.file("new.sqlite"))))
        for table in ArchiveTable.all {
            #expect(migrated.contains(#"index | \#(table.key)UniqueKey | \#(table.key) | CREATE UNIQUE INDEX "\#(table.key)UniqueKey" ON "\#(table.key)" ("\#(table.uniqueKey)")"#))
        }
        #expect(migrated.contains { $0.hasPrefix("index | measurementsByKindAndTime |") })
        #expect(!migrated.contains { $0.contains("sqlite_autoindex_measurements") })
    }

    @Test("a store left at schema 6 is migrated so doubles keep their sign: rows, rowids, indexes kept; negative zero then stays negative")
    func migrationToDoublesWithSign() throws {
        let dir = TemporaryDirectory()
        try PrivateFiles.touch(dir.file("old.sqlite"))
        let database = try SQLiteDatabase(path: dir.file("old.sqlite"), create: false)
        try StoreMigration.migrate(database, through: 6)
        let row = RowFactory.minimal(.measurements, index: 1)
        let valueIndex = ArchiveTable.measurements.fieldIndex("value")!
        var negative = RowFactory.minimal(.measurements, index: 2)
        negative[valueIndex] = .double(-0.0)
        do {
            let writer = try StoreRowWriter(database: database)
            try writer.add(row, to: .measurements)
            try writer.add(negative, to: .measurements)
        }
        #expect(try database.integer(#"SELECT count(*) FROM "measurements" WHERE double_bits("value") = double_bits(-0.0)"#) == 0,
                "schema 6's REAL column kept a negative zero: the migration would not be needed")

        try StoreMigration.migrate(database)
        var again = RowFactory.minimal(.measurements, index: 3)
        again[valueIndex] = .double(-0.0)
        try StoreRowWriter(database: database).add(again, to: .measurements)
        let kept = try StoreFixtures.rawContent(of: dir.file("old.sqlite"))
        let zero = negative.values.map { $0 == .double(-0.0) ? FieldValue.double(0) : $0 }
        #expect(kept.rows["measurements"] == [[.int(1)] + row.values, [.int(2)] + zero, [.int(3)] + again.values])

        try PrivateFiles.touch(dir.file("new.sqlite"))
        try StoreMigration.migrate(try SQLiteDatabase(path: dir.file("new.sqlite"), create: false))
        #expect(try schema(dir.file("old.sqlite")) == (try schema(dir.file("new.sqlite"))))
    }

    @Test("a new database gets the current schema directly: the same objects as replaying every step, every step recorded, no table rebuilt")
    func newDatabaseSkipsTheRebuilds() throws {
        let dir = TemporaryDirectory()
        for name in ["direct.sqlite", "replayed.sqlite"] { try PrivateFiles.touch(dir.file(name)) }
        let direct = try SQLiteDatabase(path: dir.file("direct.sqlite"), create: false)
        try StoreMigration.migrate(direct)
        let replayed = try SQLiteDatabase(path: dir.file("replayed.sqlite"), create: false)
        try StoreMigration.migrate(replayed, replay: true)

        let expected = try schema(dir.file("replayed.sqlite"))
        #expect(expected.count > ArchiveTable.all.count * 2)
        #expect(try schema(dir.file("direct.sqlite")) == expected)
        for database in [direct, replayed] {
            #expect(try database.integer("PRAGMA user_version") == Int64(StoreMigration.all.count))
            let names = try database.prepare(#"SELECT name FROM "schemaMigrations" ORDER BY rowid"#)
            var recorded: [String] = []
            while try names.step() { recorded.append(names.text(at: 0)) }
            #expect(recorded == StoreMigration.all.map(\.name))
        }
        // SQLite counts every change of the schema: one per object created directly; the replay
        // also creates, fills, drops and renames a copy of each archive table (and its indexes).
        let directChanges = try direct.integer("PRAGMA schema_version")
        #expect(directChanges <= Int64(StoreMigration.currentSchema.count + 1))
        #expect(try replayed.integer("PRAGMA schema_version") > directChanges + Int64(ArchiveTable.all.count * 3))

        // A store the steps left at schema 5 still runs the last step (no shortcut there).
        try PrivateFiles.touch(dir.file("old.sqlite"))
        let old = try SQLiteDatabase(path: dir.file("old.sqlite"), create: false)
        try StoreMigration.migrate(old, through: 5)
        try StoreMigration.migrate(old)
        #expect(try schema(dir.file("old.sqlite")) == expected)
    }

    @Test("a quoted SQL name doubles each quote: SQLite reads back the name as it was")
    func quotedNames() throws {
        #expect(StoreSchema.quoted("measurements") == #""measurements""#)
        #expect(StoreSchema.quoted("") == #""""#)
        #expect(StoreSchema.quoted(#"a"b""#) == #""a""b""""#)
        let names = [#"""#, #"x""y"#, "café \u{0301}\"", #""lead and trail""#]
        let database = try SQLiteDatabase(path: ":memory:", create: true)
        for (index, name) in names.enumerated() {
            try database.execute("CREATE TABLE \(StoreSchema.quoted(name)) (\(StoreSchema.quoted("c\(index)\"")) INTEGER)")
            try database.execute("INSERT INTO \(StoreSchema.quoted(name)) VALUES (\(index))")
            #expect(try database.integer("SELECT \(StoreSchema.quoted("c\(index)\"")) FROM \(StoreSchema.quoted(name))") == Int64(index))
        }
        let tables = try database.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY rowid")
        var found: [String] = []
        while try tables.step() { found.append(tables.text(at: 0)) }
        #expect(found == names)
    }

    @Test("a new store, a replaced one and a migrated empty one have the same schema, indexes included")
    func importKeepsTheSchema() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("demo"), days: 3)
        _ = try StoreFixtures.export(dir.file("demo"), to: dir.file("a.json.gz"))
        try StoreFixtures.importArchive(dir.file("a.json.gz"), into: dir.file("new"))
        try StoreFixtures.importArchive(dir.file("a.json.gz"), into: dir.file("replaced"))
        try StoreFixtures.importArchive(dir.file("a.json.gz"), into: dir.file("replaced"), mode: .replace)
        try PrivateFiles.touch(dir.file("empty.sqlite"))
        try StoreMigration.migrate(try SQLiteDatabase(path: dir.file("empty.sqlite"), create: false))
        let expected = try schema(dir.file("empty.sqlite"))
        #expect(expected.count > ArchiveTable.all.count * 2)
        #expect(try schema(dir.file("new/pulse.sqlite")) == expected)
        #expect(try schema(dir.file("replaced/pulse.sqlite")) == expected)
        #expect(try StoreSnapshot(store: dir.file("replaced")) == StoreSnapshot(store: dir.file("demo")))
    }

    @Test("the first row repeating a key, in the file's order, is refused with the row it repeats; nothing is created")
    func firstRepeatInFileOrder() throws {
        let dir = TemporaryDirectory()
        var content = InMemoryContent()
        let id = ArchiveTable.measurements.uniqueKeyIndex
        var rows = [1, 2, 3, 4, 5].map { RowFactory.minimal(.measurements, index: $0) }
        rows[4][id] = rows[0][id]  // repeats row 0, but after…
        rows[3][id] = rows[2][id]  // …row 3 repeats row 2
        content.rows = ["measurements": rows]
        try writeArchive(content, to: dir.file("a.json.gz"))
        let result = try CLI.run(["import", dir.file("a.json.gz"), "--store", dir.file("s"), "--no-backfill"])
        #expect(result.exitCode == 1)
        guard case .string(let repeated) = rows[2][id] else { Issue.record("ids are strings"); return }
        #expect(result.stderr.contains("measurements[3] repeats id \"\(repeated)\" of measurements[2]"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("s")))
    }
}
