import Foundation
import Testing
@testable import PulseArchive
@testable import PulseStore
import PulseSQLite
import PulseSystem
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

@Suite("The store: import and export")
struct StoreTests {
    @Test("import(export(store)) equals the store, table by table, field by field")
    func storeRoundTrip() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("a"))
        _ = try StoreFixtures.export(dir.file("a"), to: dir.file("a.json.gz"))
        try StoreFixtures.importArchive(dir.file("a.json.gz"), into: dir.file("b"))
        let a = try StoreSnapshot(store: dir.file("a")), b = try StoreSnapshot(store: dir.file("b"))
        #expect(a == b)
        #expect((a.rows["measurements"]?.count ?? 0) > 1000)
    }

    @Test("export(import(A)) holds the rows of A: every field, edge values, dates to the millisecond")
    func archiveRoundTrip() throws {
        let dir = TemporaryDirectory()
        let content = RowFactory.everyTable()
        try writeArchive(content, to: dir.file("A.json.gz"))
        try StoreFixtures.importArchive(dir.file("A.json.gz"), into: dir.file("s"))
        _ = try StoreFixtures.export(dir.file("s"), to: dir.file("B.json.gz"))
        let a = try StoreSnapshot(archive: dir.file("A.json.gz")), b = try StoreSnapshot(archive: dir.file("B.json.gz"))
        #expect(a == b)
        #expect(b.rows["wearableLogs"]?.count == 2)
    }

    @Test("the golden format-1 archive imports and exports to the same rows")
    func goldenRoundTrip() throws {
        let dir = TemporaryDirectory()
        let result = try StoreFixtures.importArchive(Repository.sampleFormat1, into: dir.file("s"))
        #expect(result.mode == "new")
        _ = try StoreFixtures.export(dir.file("s"), to: dir.file("B.json.gz"), formatVersion: 1)
        #expect(try StoreSnapshot(archive: Repository.sampleFormat1) == StoreSnapshot(archive: dir.file("B.json.gz")))
    }

    @Test("a wearable log message, a bucket whose startEpoch differs from its timestamp, another zone's midnight survive")
    func pitfallsSurvive() throws {
        let dir = TemporaryDirectory()
        var content = InMemoryContent()
        var log = RowFactory.minimal(.wearableLogs, index: 1)
        log[ArchiveTable.wearableLogs.fieldIndex("message")!] = .string("CONNECTION/INFO: Connected to R02")
        var bucket = RowFactory.minimal(.activityBucketSamples, index: 1)
        bucket[ArchiveTable.activityBucketSamples.fieldIndex("startEpoch")!] = .int(1_771_826_400)
        bucket[ArchiveTable.activityBucketSamples.fieldIndex("timestamp")!] = .date(1_771_830_000_000)
        var daily = RowFactory.minimal(.activityDailies, index: 1)
        daily[ArchiveTable.activityDailies.fieldIndex("date")!] = .date(ArchiveDate.parse("2026-03-01T05:00:00.000Z")!)  // New York midnight
        content.rows = ["wearableLogs": [log], "activityBucketSamples": [bucket], "activityDailies": [daily]]
        try writeArchive(content, to: dir.file("A.json.gz"))
        var archive = dir.file("A.json.gz")
        for cycle in 0..<3 {
            let store = dir.file("s\(cycle)")
            try StoreFixtures.importArchive(archive, into: store)
            archive = dir.file("out\(cycle).json.gz")
            _ = try StoreFixtures.export(store, to: archive)
        }
        let final = try StoreSnapshot(archive: archive)
        #expect(final.rows["wearableLogs"] == [log])
        #expect(final.rows["activityBucketSamples"] == [bucket])
        #expect(final.rows["activityDailies"] == [daily])
    }

    @Test("replace makes the store equal to the file: rows, settings (removed keys too) and attachments")
    func replaceSemantics() throws {
        let dir = TemporaryDirectory()
        var old = InMemoryContent()
        old.rows["measurements"] = [RowFactory.minimal(.measurements, index: 1), RowFactory.minimal(.measurements, index: 2)]
        old.rows["devices"] = [RowFactory.minimal(.devices, index: 1)]
        old.settings = [("pulseloop.metricprefs.v1", "{\"old\":1}"), ("pulseloop.coach.settings.v1", "{}")]
        old.attachments = [("old.jpg", [1])]
        var new = InMemoryContent()
        new.rows["measurements"] = [RowFactory.minimal(.measurements, index: 3)]
        new.settings = [("pulseloop.metricprefs.v1", "{\"new\":2}")]
        new.attachments = [("new.jpg", [2])]
        try writeArchive(old, to: dir.file("old.json.gz"))
        try writeArchive(new, to: dir.file("new.json.gz"))
        let store = dir.file("s")
        try StoreFixtures.importArchive(dir.file("old.json.gz"), into: store)
        let before = try StoreSnapshot(store: store)

        #expect(throws: StoreError.self) { try StoreFixtures.importArchive(dir.file("new.json.gz"), into: store) }
        let result = try StoreFixtures.importArchive(dir.file("new.json.gz"), into: store, mode: .replace)
        #expect(result.mode == "replace")
        #expect(try StoreSnapshot(store: store).sameContent(as: StoreSnapshot(archive: dir.file("new.json.gz"))))

        // The safety backup holds the old store and restores it.
        let backup = try #require(result.safetyBackupPath)
        #expect(backup.hasPrefix(store + "/backups/"))
        #expect(StoreFixtures.mode(backup) == 0o600)
        try StoreFixtures.importArchive(backup, into: dir.file("restored"))
        #expect(try StoreSnapshot(store: dir.file("restored")) == before)
    }

    @Test("merge adds only new keys: existing rows, settings and attachments win")
    func mergeSemantics() throws {
        let dir = TemporaryDirectory()
        let shared = RowFactory.minimal(.measurements, index: 1)
        var changed = shared
        changed[ArchiveTable.measurements.fieldIndex("value")!] = .double(99)
        var old = InMemoryContent()
        old.rows["measurements"] = [shared]
        old.settings = [("k1", #""old""#)]
        old.attachments = [("a.jpg", [1])]
        var new = InMemoryContent()
        new.rows["measurements"] = [changed, RowFactory.minimal(.measurements, index: 2)]
        new.settings = [("k1", #""new""#), ("k2", #""added""#)]
        new.attachments = [("a.jpg", [9]), ("b.jpg", [2])]
        try writeArchive(old, to: dir.file("old.json.gz"))
        try writeArchive(new, to: dir.file("new.json.gz"))
        let store = dir.file("s")
        try StoreFixtures.importArchive(dir.file("old.json.gz"), into: store)
        let result = try StoreFixtures.importArchive(dir.file("new.json.gz"), into: store, mode: .merge)
        #expect(result.mode == "merge")
        #expect(result.inserted["measurements"] == 1)
        #expect(result.safetyBackupPath == nil)
        let after = try StoreSnapshot(store: store)
        #expect(after.rows["measurements"] == [shared, RowFactory.minimal(.measurements, index: 2)])
        #expect(after.settings == ["k1": #""old""#, "k2": #""added""#])
        #expect(after.attachments == ["a.jpg": [1], "b.jpg": [2]])
        // A second merge of the same file changes nothing.
        #expect(try StoreFixtures.importArchive(dir.file("new.json.gz"), into: store, mode: .merge).inserted.values.reduce(0, +) == 0)
        #expect(try StoreSnapshot(store: store) == after)
    }

    @Test("format 1 export leaves out readinessDailies and imports into a format-1 reader")
    func formatOneExport() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.importArchive(Repository.sampleFormat2, into: dir.file("s"))
        let result = try StoreFixtures.export(dir.file("s"), to: dir.file("v1.json.gz"), formatVersion: 1)
        #expect(result.tables["readinessDailies"] == nil)
        let text = try String(decoding: gunzip(dir.file("v1.json.gz")), as: UTF8.self)
        #expect(!text.contains("readinessDailies") && text.contains(#""formatVersion":1"#) && text.contains(#""cycleDays":["#))
    }

    @Test("the store and everything the tool writes are private: 0700 directories, 0600 files")
    func privateFiles() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("nested/store")
        let result = try CLI.run(["import", Repository.sampleFormat2, "--store", store, "--no-backfill"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(StoreFixtures.mode(store) == 0o700)
        #expect(StoreFixtures.mode(dir.file("nested")) == 0o700)
        #expect(StoreFixtures.mode(store + "/pulse.sqlite") == 0o600)
        let export = try CLI.run(["export", "--store", store, "-o", dir.file("e.json.gz")])
        #expect(export.exitCode == 0 && export.stdout == dir.file("e.json.gz") + "\n")
        #expect(StoreFixtures.mode(dir.file("e.json.gz")) == 0o600)
        let replace = try CLI.run(["import", Repository.sampleFormat1, "--store", store, "--replace"])
        #expect(replace.exitCode == 0)
        let backups = try FileManager.default.contentsOfDirectory(atPath: store + "/backups")
        #expect(backups.count == 1)
        #expect(StoreFixtures.mode(store + "/backups") == 0o700 && StoreFixtures.mode(store + "/backups/" + backups[0]) == 0o600)
        #expect(replace.stderr.contains("Saved the store's previous content to \(store)/backups/"))
        // --quiet prints only the result and errors, as it does for every command.
        let quiet = try CLI.run(["import", Repository.sampleFormat1, "--store", store, "--replace", "--quiet"])
        #expect(quiet.exitCode == 0 && quiet.stderr.isEmpty, "\(quiet.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: store + "/backups").count == 2)
    }

    @Test("export never overwrites and never leaves a file behind on failure")
    func exportRefusals() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 2)
        dir.write("taken.json.gz", "mine")
        let taken = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("taken.json.gz")])
        #expect(taken.exitCode == 1 && taken.stderr.contains("already exists"))
        #expect(StoreFixtures.bytes(dir.file("taken.json.gz")) == Data("mine".utf8))
        let missing = try CLI.run(["export", "--store", dir.file("nothing-here"), "-o", dir.file("x.json.gz")])
        #expect(missing.exitCode == 1 && missing.stderr.contains("there is no store"))
        #expect(!FileManager.default.fileExists(atPath: dir.file("nothing-here")))
        let noDirectory = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("no/such/dir/x.json.gz")])
        // The message names the file asked for, not the hidden temporary name it is written under.
        #expect(noDirectory.exitCode == 1 && noDirectory.stderr.hasPrefix("Error: cannot create \(dir.file("no/such/dir/x.json.gz")): "),
                "\(noDirectory.stderr)")
    }

    @Test("export -o DIR writes the default name in DIR and prints its path; without -o it writes it here")
    func exportIntoDirectory() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 2)
        try FileManager.default.createDirectory(atPath: dir.file("backups"), withIntermediateDirectories: false)
        let result = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("backups")])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let written = try FileManager.default.contentsOfDirectory(atPath: dir.file("backups"))
        #expect(written.count == 1 && written[0].hasPrefix("pulseloop-backup-") && written[0].hasSuffix(".json.gz"), "\(written)")
        #expect(result.stdout.trimmingCharacters(in: .newlines) == dir.file("backups") + "/" + written[0])
        #expect(try ArchiveReader(path: dir.file("backups") + "/" + written[0]).inspect().formatVersion == 2)
        try FileManager.default.createDirectory(atPath: dir.file("here"), withIntermediateDirectories: false)
        let here = try CLI.run(["export", "--store", dir.file("s")], in: dir.file("here"))
        #expect(here.exitCode == 0, "\(here.stderr)")
        let hereWritten = try FileManager.default.contentsOfDirectory(atPath: dir.file("here"))
        #expect(hereWritten.count == 1 && hereWritten[0].hasPrefix("pulseloop-backup-") && here.stdout.hasPrefix("pulseloop-backup-"), "\(hereWritten)")
    }

    @Test("a second writer is refused while the store is locked")
    func lockedStore() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 2)
        let lock = try StoreLock(directory: dir.file("s"), activity: "an import")
        let result = try CLI.run(["import", Repository.sampleFormat1, "--store", dir.file("s"), "--merge"])
        #expect(result.exitCode == 1)
        #expect(result.stderr.contains("the store \(dir.file("s")) is busy: an import (pid \(getpid())) is changing it; wait for it to finish"))
        let export = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("x.json.gz")])
        #expect(export.exitCode == 1 && export.stderr.contains("is busy: an import"))
        withExtendedLifetime(lock) {}
    }

    @Test("a store migrated by a newer tool is refused; migrations are recorded by name")
    func schemaVersions() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 1)
        let database = try SQLiteDatabase(path: dir.file("s/pulse.sqlite"), create: false)
        let names = try database.prepare(#"SELECT "name" FROM "schemaMigrations" ORDER BY rowid"#)
        var applied: [String] = []
        while try names.step() { applied.append(names.text(at: 0)) }
        #expect(applied == StoreMigration.all.map(\.name))
        #expect(try database.integer("PRAGMA user_version") == Int64(StoreMigration.all.count))
        try database.execute("PRAGMA user_version = \(StoreMigration.all.count + 1)")
        let result = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("x.json.gz")])
        #expect(result.exitCode == 1 && result.stderr.contains("was written by a newer version (schema version \(StoreMigration.all.count + 1)")
                && result.stderr.contains("): update pulse-archive"), "\(result.stderr)")
    }

    @Test("every archive table is a SQL table with a column per field, so a replace wipes every table")
    func schemaCoversEveryTable() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 1)
        let database = try SQLiteDatabase(path: dir.file("s/pulse.sqlite"), create: false)
        let tables = try database.prepare(#"SELECT "name" FROM sqlite_master WHERE type = 'table' ORDER BY "name""#)
        var names = Set<String>()
        while try tables.step() { names.insert(tables.text(at: 0)) }
        #expect(names == Set(ArchiveTable.all.map(\.key) + ["settings", "attachments", "schemaMigrations", "documentSwaps", "mealEntries", "foodProducts"]))
        for table in ArchiveTable.all {
            let columns = try database.prepare("SELECT name, \"notnull\" FROM pragma_table_info(?)")
            try columns.bind([.string(table.key)])
            var found: [String: Bool] = [:]
            while try columns.step() { found[columns.text(at: 0)] = columns.int64(at: 1) != 0 }
            #expect(found == Dictionary(uniqueKeysWithValues: table.fields.map { ($0.name, !$0.isOptional) }), "\(table.key)")
        }
    }
}

func gunzip(_ path: String) throws -> [UInt8] {
    try readToEnd(try GzipReader(source: SystemFile.openForReading(path), name: path))
}
