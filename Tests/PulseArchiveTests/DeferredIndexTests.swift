import Foundation
import Testing
@testable import PulseArchive
@testable import PulseStore
import PulseSystem

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
        #expect(kept.rows["measurements"] == [[.int(1)] + rows[0].values, [.int(3)] + rows[2].values])
        #expect { try writer.add(rows[0], to: .measurements) } throws: { ($0 as? StoreError)?.kind == .duplicateKey }

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
