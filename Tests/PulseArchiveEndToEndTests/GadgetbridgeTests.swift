import Foundation
import Testing
@testable import GadgetbridgeTestSupport
@testable import PulseArchive
@testable import PulseStore
import PulseSQLite
@testable import PulseStoreTestSupport
@testable import PulseTestSupport

/// `import`, `inspect`, `verify` of a Gadgetbridge database or backup ZIP, run through the binary
/// (docs/gadgetbridge.md).
@Suite struct GadgetbridgeTests {
    /// One `now` for every run, so two stores compare row for row.
    static let environment = ["SOURCE_DATE_EPOCH": "1780000000"]

    static func history(_ dir: TemporaryDirectory, _ name: String = "Gadgetbridge", _ history: GadgetbridgeFixtures.History = .init()) throws -> String {
        let path = dir.file(name)
        try GadgetbridgeFixtures.write(history, to: path)
        return path
    }

    /// A database made by `sql` alone, outside what Gadgetbridge itself writes.
    static func handMade(_ dir: TemporaryDirectory, _ name: String, _ sql: String) throws -> String {
        let path = dir.file(name)
        let database = try SQLiteDatabase(path: path, create: true)
        defer { database.close() }
        try database.execute(sql)
        return path
    }

    static func importJSON(_ arguments: [String], zone: String = "UTC", sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let result = try CLI.run(["import"] + arguments + ["--json", "--timezone", zone], environment: environment)
        #expect(result.exitCode == 0, "\(result.stderr)", sourceLocation: sourceLocation)
        return result.json
    }

    static func tables(_ json: [String: Any]) -> [String: [String: Int]] {
        ((json["gadgetbridge"] as? [String: Any])?["tables"] as? [String: [String: Int]]) ?? [:]
    }

    /// Every table's counts add up: read = imported + duplicate + overlapping (sleep) + invalid + unmapped.
    static func expectBalanced(_ tables: [String: [String: Int]], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(tables.count == 9, sourceLocation: sourceLocation)
        for (name, c) in tables {
            #expect(c["read"] == (c["imported"] ?? 0) + (c["duplicate"] ?? 0) + (c["overlapping"] ?? 0) + (c["invalid"] ?? 0) + (c["unmapped"] ?? 0),
                    "\(name): \(c)", sourceLocation: sourceLocation)
        }
    }

    @Test("import of a database: rows per table, no-reading values invalid, the Mi Band ignored with its rows; the user's file untouched (bytes, mtime, no -wal/-shm); a second import adds nothing")
    func importDatabase() throws {
        let dir = TemporaryDirectory()
        let file = try Self.history(dir)
        let before = try #require(FileManager.default.contents(atPath: file))
        let mtime = try #require(try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date)
        let store = dir.file("store")
        let first = try Self.importJSON([file, "--store", store])
        #expect(first["mode"] as? String == "new")
        let tables = Self.tables(first)
        Self.expectBalanced(tables)
        #expect(tables["COLMI_HEART_RATE_SAMPLE"] == ["read": 867, "imported": 864, "duplicate": 0, "invalid": 3, "unmapped": 0])
        #expect(tables["COLMI_SLEEP_SESSION_SAMPLE"]?["imported"] == 4 && tables["COLMI_SLEEP_STAGE_SAMPLE"]?["imported"] == 14)
        let gadgetbridge = try #require(first["gadgetbridge"] as? [String: Any])
        #expect(gadgetbridge["form"] as? String == "database" && gadgetbridge["schemaVersion"] as? Int == 141 && ["UTC", "GMT"].contains(gadgetbridge["timezone"] as? String ?? ""))
        let devices = try #require(gadgetbridge["devices"] as? [[String: Any]])
        #expect(devices.count == 2)
        #expect(devices[0]["status"] as? String == "imported" && devices[0]["created"] as? Bool == true
                && devices[0]["deviceId"] as? String == "E90C6E01-34FE-5D1C-8C18-5E6C54902A67")
        #expect(devices[1]["status"] as? String == "ignored" && devices[1]["rows"] as? Int == 72 && devices[1]["reason"] != nil)
        let inserted = try #require(first["inserted"] as? [String: Int])
        #expect(inserted["measurements"] == 864 + 72 + 3 * 144 && inserted["sleepSessions"] == 4 && inserted["activityDailies"] == 3)
        #expect((first["readiness"] as? [String: Any])?["backfilled"] as? Bool == true)
        // The user's database is read, never written.
        #expect(FileManager.default.contents(atPath: file) == before)
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date == mtime)
        #expect(!FileManager.default.fileExists(atPath: file + "-wal") && !FileManager.default.fileExists(atPath: file + "-shm")
                && !FileManager.default.fileExists(atPath: file + "-journal"))

        // Into a store with data: --merge is needed, and then nothing is new.
        let refused = try CLI.run(["import", file, "--store", store, "--timezone", "UTC"])
        #expect(refused.exitCode == 1 && refused.stderr.contains("already holds data"), "\(refused.stderr)")
        let snapshot = try StoreSnapshot(store: store)
        let again = try Self.importJSON([file, "--store", store, "--merge", "--no-backfill"])
        #expect((again["inserted"] as? [String: Int])?.values.reduce(0, +) == 0)
        let againTables = Self.tables(again)
        Self.expectBalanced(againTables)
        #expect(againTables.values.allSatisfy { $0["imported"] == 0 })
        #expect(againTables["COLMI_HEART_RATE_SAMPLE"]?["duplicate"] == 864)
        #expect(((again["gadgetbridge"] as? [String: Any])?["devices"] as? [[String: Any]])?.first?["created"] as? Bool == false)
        #expect(try StoreSnapshot(store: store) == snapshot)
    }

    @Test("text report: per table, the ignored device with its rows, the steps caveat once")
    func textReport() throws {
        let dir = TemporaryDirectory()
        let result = try CLI.run(["import", try Self.history(dir), "--store", dir.file("store"), "--no-backfill"], environment: Self.environment)
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stdout.contains("COLMI_HEART_RATE_SAMPLE") && result.stdout.contains("Ignored Mi Smart Band 4 (MIBAND4, C8:0F:10:00:00:01)"))
        #expect(result.stdout.components(separatedBy: "undercount steps").count == 2, "\(result.stdout)")
    }

    @Test("the backup ZIP gives the store the plain database gives; the extracted copy is gone afterwards")
    func zipEqualsDatabase() throws {
        let dir = TemporaryDirectory()
        let file = try Self.history(dir)
        try GadgetbridgeFixtures.zip(database: file, to: dir.file("backup"))
        let scratch = dir.file("tmp")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let plain = try Self.importJSON([file, "--store", dir.file("a")])
        let zipped = try CLI.run(["import", dir.file("backup"), "--store", dir.file("b"), "--json", "--timezone", "UTC"],
                                 environment: Self.environment.merging(["TMPDIR": scratch]) { $1 })
        #expect(zipped.exitCode == 0, "\(zipped.stderr)")
        #expect((zipped.json["gadgetbridge"] as? [String: Any])?["form"] as? String == "backup")
        #expect(Self.tables(zipped.json) == Self.tables(plain))
        #expect(try StoreSnapshot(store: dir.file("a")) == StoreSnapshot(store: dir.file("b")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty)
    }

    @Test("--replace into a store with data: a safety backup first, then the store an import into an empty store gives")
    func replace() throws {
        let dir = TemporaryDirectory()
        let file = try Self.history(dir, "Gadgetbridge", .init(days: 2))
        let store = dir.file("store")
        try StoreFixtures.demoStore(store, days: 3)
        // The store's documents go as an archive --replace removes them.
        let split = store + "/Splits/01M6CRWHZ8FH1N0TFB3R6MB32H.json"
        try FileManager.default.createDirectory(atPath: store + "/Splits", withIntermediateDirectories: true)
        try Data(#"{"id": "01M6CRWHZ8FH1N0TFB3R6MB32H", "name": "Legs"}"#.utf8).write(to: URL(fileURLWithPath: split))
        let json = try Self.importJSON([file, "--store", store, "--replace", "--no-backfill"])
        #expect(json["mode"] as? String == "replace")
        let backup = try #require(json["safetyBackup"] as? String)
        #expect(FileManager.default.fileExists(atPath: backup))
        #expect(!FileManager.default.fileExists(atPath: split))
        _ = try Self.importJSON([file, "--store", dir.file("fresh"), "--no-backfill"])
        #expect(try StoreSnapshot(store: store).sameContent(as: StoreSnapshot(store: dir.file("fresh"))))
        let left = FileManager.default.enumerator(atPath: store)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".json") } ?? []
        #expect(left.isEmpty, "documents left: \(left)")
    }

    @Test("a Gadgetbridge database or backup on standard input (a pipe) is spooled and imported as from its path; an archive on it still imports")
    func standardInput() throws {
        let dir = TemporaryDirectory()
        let file = try Self.history(dir, "Gadgetbridge", .init(days: 1))
        try GadgetbridgeFixtures.zip(database: file, to: dir.file("backup"))
        let scratch = dir.file("tmp")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        func piped(_ path: String, _ arguments: String) throws -> CLI.Result {
            try CLI.shell("cat '\(path)' | exec \"$PA\" \(arguments)", environment: Self.environment.merging(["TMPDIR": scratch]) { $1 })
        }
        _ = try Self.importJSON([file, "--store", dir.file("expected"), "--no-backfill"])
        let expected = try StoreSnapshot(store: dir.file("expected"))
        for (name, path) in [("database", file), ("backup", dir.file("backup"))] {
            let result = try piped(path, "import - --store '\(dir.file("store-" + name))' --no-backfill --timezone UTC --json")
            #expect(result.exitCode == 0, "\(name): \(result.stderr)")
            #expect((result.json["gadgetbridge"] as? [String: Any])?["form"] as? String == name)
            #expect(try StoreSnapshot(store: dir.file("store-" + name)) == expected, "\(name)")
        }
        let inspected = try piped(dir.file("backup"), "inspect - --json")
        #expect(inspected.exitCode == 0 && inspected.json["dialect"] as? String == "gadgetbridge", "\(inspected.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty, "the spooled copies are removed")
        // An archive on standard input: its first bytes, looked at, are put back.
        _ = try StoreFixtures.export(dir.file("expected"), to: dir.file("archive.json.gz"))
        let archive = try piped(dir.file("archive.json.gz"), "import - --store '\(dir.file("from-archive"))' --no-backfill")
        #expect(archive.exitCode == 0, "\(archive.stderr)")
        #expect(try StoreSnapshot(store: dir.file("from-archive")).sameContent(as: expected))
    }

    @Test("the app's own row for the ring (its MAC, in another case) stops the device row; the readings still come")
    func appsOwnDevice() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        try StoreFixtures.demoStore(store, days: 2)
        let database = try SQLiteDatabase(path: store + "/pulse.sqlite", create: false)
        try database.execute(#"UPDATE "devices" SET "bleAddressHint" = 'f0:a1:b2:c3:d4:e5'"#)
        database.close()
        let json = try Self.importJSON([try Self.history(dir, "Gadgetbridge", .init(days: 1, start: GadgetbridgeFixtures.march1 - 30 * 86_400_000)),
                                        "--store", store, "--merge", "--no-backfill"])
        let device = try #require(((json["gadgetbridge"] as? [String: Any])?["devices"] as? [[String: Any]])?.first)
        #expect(device["status"] as? String == "imported" && device["created"] as? Bool == false)
        #expect((json["inserted"] as? [String: Int])?["devices"] == 0 && ((json["inserted"] as? [String: Int])?["measurements"] ?? 0) > 0)
    }

    @Test("a later export imported with --merge adds only the new days")
    func laterExport() throws {
        let dir = TemporaryDirectory()
        let early = try Self.history(dir, "early", .init(days: 2, invalidRows: false))
        let later = try Self.history(dir, "later", .init(days: 4, invalidRows: false))
        let store = dir.file("store")
        _ = try Self.importJSON([early, "--store", store, "--no-backfill"])
        let second = try Self.importJSON([later, "--store", store, "--merge", "--no-backfill"])
        let tables = Self.tables(second)
        Self.expectBalanced(tables)
        #expect(tables["COLMI_HEART_RATE_SAMPLE"]?["imported"] == 2 * 288 && tables["COLMI_HEART_RATE_SAMPLE"]?["duplicate"] == 2 * 288)
        #expect(tables["COLMI_ACTIVITY_SAMPLE"]?["imported"] == 48 && tables["COLMI_SLEEP_SESSION_SAMPLE"]?["imported"] == 2)
        #expect((second["inserted"] as? [String: Int])?["activityDailies"] == 2)
        // The same as importing the later export alone.
        _ = try Self.importJSON([later, "--store", dir.file("alone"), "--no-backfill"])
        let merged = try StoreSnapshot(store: store), alone = try StoreSnapshot(store: dir.file("alone"))
        for table in ["measurements", "sleepSessions", "sleepStageBlocks", "activityBucketSamples", "devices"] {
            #expect(Set(merged.rows[table] ?? []) == Set(alone.rows[table] ?? []), "\(table)")
        }
    }

    /// Each `activityDailies` row's steps by its date, and the bucket sums by their day.
    static func dailySteps(_ snapshot: StoreSnapshot) -> (dailies: [Int64: Int64], buckets: [Int64: Int64]) {
        var dailies: [Int64: Int64] = [:], buckets: [Int64: Int64] = [:]
        for row in snapshot.rows["activityDailies"] ?? [] {
            if case .date(let day) = row[1], case .int(let steps) = row[2] { dailies[day] = steps }
        }
        for row in snapshot.rows["activityBucketSamples"] ?? [] {
            if case .date(let day) = row[1], case .int(let steps) = row[3] { buckets[day, default: 0] += steps }
        }
        return (dailies, buckets)
    }

    @Test("--merge across the spring and autumn DST changes (Europe/Berlin): each day's total lands on its own local day, a 23-hour day never takes the next day's row",
          arguments: [(Int64(28), Int64(29)), (Int64(29), Int64(30)), (Int64(237), Int64(238))])
    func mergeAcrossDST(earlier: Int64, later: Int64) throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        let day = { (n: Int64) in GadgetbridgeFixtures.march1 + n * 86_400_000 }
        _ = try Self.importJSON([try Self.history(dir, "later", .init(days: 1, start: day(later), otherDevice: false, invalidRows: false)),
                                 "--store", store, "--no-backfill"], zone: "Europe/Berlin")
        _ = try Self.importJSON([try Self.history(dir, "earlier", .init(days: 1, start: day(earlier), otherDevice: false, invalidRows: false)),
                                 "--store", store, "--merge", "--no-backfill"], zone: "Europe/Berlin")
        let (dailies, buckets) = Self.dailySteps(try StoreSnapshot(store: store))
        // Every local day with buckets has its row, holding (at least, as the merge takes the larger) its buckets' sum.
        #expect(Set(dailies.keys) == Set(buckets.keys), "days \(dailies.keys.sorted()) vs buckets \(buckets.keys.sorted())")
        for (date, sum) in buckets { #expect(dailies[date] == sum, "the day at \(date): \(dailies[date] ?? -1) steps, its buckets \(sum)") }
    }

    @Test("hostile activity values (STEPS 2^62 twice on one day, 65,536, DISTANCE 1e300, a timestamp near Int64.max) are invalid rows, never a trap; inspect counts the same invalid rows and shows ISO-8601 first/last")
    func hostileActivityValues() throws {
        let dir = TemporaryDirectory()
        let file = try Self.history(dir, "Gadgetbridge", .init(days: 1, otherDevice: false, invalidRows: false))
        let database = try SQLiteDatabase(path: file, create: false)
        let t = GadgetbridgeFixtures.march1 / 1000
        try database.execute(#"UPDATE "COLMI_ACTIVITY_SAMPLE" SET "STEPS" = 4611686018427387904 WHERE "TIMESTAMP" IN (\#(t), \#(t + 3600))"#)
        try database.execute(#"UPDATE "COLMI_ACTIVITY_SAMPLE" SET "STEPS" = 65536 WHERE "TIMESTAMP" = \#(t + 7200)"#)
        try database.execute(#"UPDATE "COLMI_ACTIVITY_SAMPLE" SET "DISTANCE" = 1e300 WHERE "TIMESTAMP" = \#(t + 10800)"#)
        try database.execute(#"UPDATE "COLMI_ACTIVITY_SAMPLE" SET "STEPS" = 65535, "DISTANCE" = 65535 WHERE "TIMESTAMP" = \#(t + 14400)"#)
        // A heart-rate row far past 2100 (its milliseconds overflow any further multiplication).
        try database.execute(#"INSERT INTO "COLMI_HEART_RATE_SAMPLE" VALUES (9223372036854775000, 1, 1, 60)"#)
        database.close()
        let json = try Self.importJSON([file, "--store", dir.file("store"), "--no-backfill"])
        #expect(Self.tables(json)["COLMI_ACTIVITY_SAMPLE"] == ["read": 24, "imported": 20, "duplicate": 0, "invalid": 4, "unmapped": 0])
        #expect(Self.tables(json)["COLMI_HEART_RATE_SAMPLE"]?["invalid"] == 1)
        // inspect agrees with import on what is invalid; first and last are ISO-8601 instants in range.
        let inspected = try CLI.run(["inspect", file, "--json"])
        #expect(inspected.exitCode == 0, "\(inspected.stderr)")
        let tables = try #require(inspected.json["tables"] as? [String: [String: Any]])
        #expect(tables["COLMI_ACTIVITY_SAMPLE"]?["invalid"] as? Int == 4 && tables["COLMI_HEART_RATE_SAMPLE"]?["invalid"] as? Int == 1)
        #expect(tables["COLMI_HEART_RATE_SAMPLE"]?["last"] as? String == "2026-03-01T23:55:00.000Z", "\(tables)")
    }

    @Test("two rows of one ring at one instant (a table without Gadgetbridge's key, a view): the valid one with the lowest value is imported, the others counted duplicate; inspect passes what import takes")
    func rowsAtOneInstant() throws {
        let dir = TemporaryDirectory()
        let file = try Self.handMade(dir, "keyless.db", """
            CREATE TABLE DEVICE (_id INTEGER PRIMARY KEY, NAME TEXT, MANUFACTURER TEXT, IDENTIFIER TEXT, TYPE INTEGER, TYPE_NAME TEXT);
            INSERT INTO DEVICE VALUES (1, 'R02', 'Colmi', 'AA:BB:CC:DD:EE:01', 0, 'COLMI_R02');
            CREATE TABLE S (TIMESTAMP INTEGER, DEVICE_ID INTEGER, USER_ID INTEGER, SPO2 INTEGER);
            INSERT INTO S VALUES (1735700400000, 1, 1, 97);
            CREATE VIEW COLMI_SPO2_SAMPLE AS SELECT * FROM S UNION ALL SELECT * FROM S;
            CREATE TABLE COLMI_HEART_RATE_SAMPLE (TIMESTAMP INTEGER, DEVICE_ID INTEGER, USER_ID INTEGER, HEART_RATE INTEGER);
            INSERT INTO COLMI_HEART_RATE_SAMPLE VALUES (1735700400000, 1, 1, 98), (1735700400000, 1, 1, 'x'), (1735700400000, 1, 1, 61);
            """)
        let inspected = try CLI.run(["inspect", file])
        #expect(inspected.exitCode == 0, "\(inspected.stderr)")
        let json = try Self.importJSON([file, "--store", dir.file("store"), "--no-backfill"])
        #expect(Self.tables(json)["COLMI_HEART_RATE_SAMPLE"] == ["read": 3, "imported": 1, "duplicate": 1, "invalid": 1, "unmapped": 0])
        #expect(Self.tables(json)["COLMI_SPO2_SAMPLE"] == ["read": 2, "imported": 1, "duplicate": 1, "invalid": 0, "unmapped": 0])
        let store = try SQLiteDatabase(path: dir.file("store/pulse.sqlite"), create: false)
        var values: [String] = []
        do {
            // Scoped, so that the statement is gone before its connection closes.
            let statement = try store.prepare(#"SELECT "kindRaw", "value" FROM "measurements" ORDER BY "kindRaw""#)
            while try statement.step() { values.append("\(statement.text(at: 0)) \(statement.double(at: 1))") }
        }
        store.close()
        #expect(values == ["hr 61.0", "spo2 97.0"], "\(values)")
    }

    @Test("a device's rows are what its tables read, whatever type DEVICE_ID holds: 1.0 is the ring's, the text '1' and an unknown id belong to no device")
    func deviceRowsAreWhatItsTablesRead() throws {
        let dir = TemporaryDirectory()
        // Columns without a declared type: SQLite keeps each value's own type.
        let file = try Self.handMade(dir, "typeless.db", """
            CREATE TABLE DEVICE (_id INTEGER PRIMARY KEY, NAME TEXT NOT NULL, MANUFACTURER TEXT NOT NULL, IDENTIFIER TEXT NOT NULL UNIQUE, TYPE INTEGER NOT NULL, TYPE_NAME TEXT, MODEL TEXT, ALIAS TEXT, PARENT_FOLDER TEXT);
            INSERT INTO DEVICE VALUES (1, 'R02', 'Colmi', 'AA:BB:CC:DD:EE:FF', 0, 'COLMI_R02', NULL, NULL, NULL);
            CREATE TABLE COLMI_HEART_RATE_SAMPLE (TIMESTAMP, DEVICE_ID, USER_ID, HEART_RATE);
            INSERT INTO COLMI_HEART_RATE_SAMPLE VALUES (1730000460000, '1', 1, 61), (1730000520000, 1, 1, 62), (1730000580000, 1.0, 1, 63), (1730000640000, 99, 1, 64);
            """)
        let inspected = try CLI.run(["inspect", file, "--json"])
        #expect(inspected.exitCode == 0, "\(inspected.stderr)")
        let devices = try #require(inspected.json["devices"] as? [[String: Any]])
        let tables = try #require(inspected.json["tables"] as? [String: [String: Any]])
        #expect(devices.first?["rows"] as? Int == 2 && tables["COLMI_HEART_RATE_SAMPLE"]?["rows"] as? Int == 2, "\(devices) \(tables)")
        let json = try Self.importJSON([file, "--store", dir.file("store"), "--no-backfill"])
        let imported = try #require((json["gadgetbridge"] as? [String: Any])?["devices"] as? [[String: Any]])
        #expect(imported.first?["rows"] as? Int == 2, "\(imported)")
        #expect(Self.tables(json)["COLMI_HEART_RATE_SAMPLE"] == ["read": 2, "imported": 2, "duplicate": 0, "invalid": 0, "unmapped": 0])
    }

    @Test("a night split across two exports: the part the store lacks is not called a duplicate but counted as overlapping and said; a re-import of the same night stays duplicate")
    func nightSplitAcrossExports() throws {
        let dir = TemporaryDirectory()
        let night = GadgetbridgeFixtures.march1 + 22 * 3_600_000
        func export(_ name: String, parts: [(start: Int64, minutes: Int64, stage: Int64)]) throws -> String {
            let file = try Self.history(dir, name, .init(days: 1, otherDevice: false, invalidRows: false))
            let database = try SQLiteDatabase(path: file, create: false)
            try database.execute(#"DELETE FROM "COLMI_SLEEP_SESSION_SAMPLE"; DELETE FROM "COLMI_SLEEP_STAGE_SAMPLE""#)
            for part in parts {
                try database.execute(#"INSERT INTO "COLMI_SLEEP_SESSION_SAMPLE" VALUES (\#(part.start), 1, 1, \#(part.start + part.minutes * 60_000))"#)
                try database.execute(#"INSERT INTO "COLMI_SLEEP_STAGE_SAMPLE" VALUES (\#(part.start), 1, 1, \#(part.minutes), \#(part.stage))"#)
            }
            database.close()
            return file
        }
        // 22:00–00:00 light; the later export adds 00:40–05:40 deep, 40 minutes after.
        let first = try export("night1", parts: [(night, 120, 2)])
        let second = try export("night2", parts: [(night, 120, 2), (night + 160 * 60_000, 300, 3)])
        let store = dir.file("store")
        _ = try Self.importJSON([first, "--store", store, "--no-backfill"])
        let merged = try Self.importJSON([second, "--store", store, "--merge", "--no-backfill"])
        let tables = Self.tables(merged)
        Self.expectBalanced(tables)
        #expect(tables["COLMI_SLEEP_SESSION_SAMPLE"] == ["read": 2, "imported": 0, "duplicate": 0, "overlapping": 2, "invalid": 0, "unmapped": 0], "\(tables)")
        #expect(tables["COLMI_SLEEP_STAGE_SAMPLE"]?["overlapping"] == 2 && tables["COLMI_SLEEP_STAGE_SAMPLE"]?["duplicate"] == 0)
        let text = try CLI.run(["import", second, "--store", store, "--merge", "--no-backfill", "--timezone", "UTC"], environment: Self.environment)
        #expect(text.exitCode == 0 && text.stdout.contains("overlapping a night already in the store"), "\(text.stdout)")
        // The same night again is a duplicate, not an overlap.
        let again = Self.tables(try Self.importJSON([first, "--store", store, "--merge", "--no-backfill"]))
        #expect(again["COLMI_SLEEP_SESSION_SAMPLE"]?["duplicate"] == 1 && again["COLMI_SLEEP_SESSION_SAMPLE"]?["overlapping"] == 0)
    }

    @Test("schema 92 imports (no temperature table); a schema missing a needed column is refused naming it, the store untouched")
    func schemaVersions() throws {
        let dir = TemporaryDirectory()
        let old = try Self.history(dir, "old", .init(days: 1, schema: 92))
        let json = try Self.importJSON([old, "--store", dir.file("store"), "--no-backfill"])
        #expect((json["gadgetbridge"] as? [String: Any])?["schemaVersion"] as? Int == 92)
        #expect(Self.tables(json)["COLMI_TEMPERATURE_SAMPLE"] == ["read": 0, "imported": 0, "duplicate": 0, "invalid": 0, "unmapped": 0])
        let broken = try Self.history(dir, "broken", .init(days: 1))
        let database = try SQLiteDatabase(path: broken, create: false)
        try database.execute(#"ALTER TABLE "COLMI_SPO2_SAMPLE" DROP COLUMN "SPO2""#)
        database.close()
        let snapshot = try StoreSnapshot(store: dir.file("store"))
        let refused = try CLI.run(["import", broken, "--store", dir.file("store"), "--merge"])
        #expect(refused.exitCode == 1 && refused.stderr.contains("the table COLMI_SPO2_SAMPLE has no column SPO2"), "\(refused.stderr)")
        #expect(try StoreSnapshot(store: dir.file("store")) == snapshot)
    }

    @Test("refusals, each exit 1 naming the cause with the store untouched: not a database, damaged, no Colmi table, a ZIP without the database or with an empty one, a ZIP bomb")
    func refusals() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        try StoreFixtures.demoStore(store, days: 2)
        let snapshot = try StoreSnapshot(store: store)
        let good = try Self.history(dir, "good", .init(days: 1))
        var damaged = try #require(FileManager.default.contents(atPath: good))
        for i in (damaged.count / 2)..<damaged.count { damaged[i] = UInt8(truncatingIfNeeded: i &* 31) }
        dir.write("damaged", damaged)
        var notDatabase = Data("SQLite format 3\u{0}".utf8)
        notDatabase.append(Data(repeating: 0x41, count: 4000))
        dir.write("garbage", notDatabase)
        let noColmi = try SQLiteDatabase(path: dir.file("nocolmi"), create: true)
        try noColmi.execute(GadgetbridgeFixtures.ddl141[0])
        noColmi.close()
        try GadgetbridgeFixtures.zip(database: good, to: dir.file("other.zip"), databaseEntry: "database/Other")
        dir.write("zeros", Data(count: 24 << 20))
        try GadgetbridgeFixtures.zip(database: dir.file("zeros"), to: dir.file("bomb"))
        // A ZIP of no entries: its end record alone, 22 bytes.
        dir.write("empty.zip", Data([0x50, 0x4B, 0x05, 0x06] + [UInt8](repeating: 0, count: 18)))
        // A backup whose database entry is empty: SQLite would open it as an empty database.
        dir.write("nothing", Data())
        try GadgetbridgeFixtures.zip(database: dir.file("nothing"), to: dir.file("empty-entry.zip"))
        let cases: [(String, String)] = [
            ("empty.zip", "is a ZIP but not a Gadgetbridge backup"),
            ("empty-entry.zip", "(database/Gadgetbridge) is empty (0 bytes): it holds no database"),
            ("garbage", "file is not a database"), ("damaged", "is damaged"), ("nocolmi", "without any COLMI table"),
            ("other.zip", "is a ZIP but not a Gadgetbridge backup"), ("bomb", "ZIP bomb"),
        ]
        for (name, message) in cases {
            let result = try CLI.run(["import", dir.file(name), "--store", store, "--merge"])
            #expect(result.exitCode == 1 && result.stderr.contains(message), "\(name): \(result.stderr)")
        }
        let bomb = try CLI.run(["import", dir.file("bomb"), "--store", store, "--merge"])
        #expect(bomb.stderr.contains("--max-inflate-ratio"), "the limit's option is named: \(bomb.stderr)")
        #expect(try StoreSnapshot(store: store) == snapshot)
    }

    @Test("inspect shows devices, tables, rows, first and last instant, schema, bytes, without a store; verify, diff and tables refuse a Gadgetbridge file, saying what reads one")
    func inspectAndVerify() throws {
        let dir = TemporaryDirectory()
        let file = try Self.history(dir, "Gadgetbridge", .init(days: 2))
        try GadgetbridgeFixtures.zip(database: file, to: dir.file("backup"))
        let inspected = try CLI.run(["inspect", dir.file("backup"), "--json"])
        #expect(inspected.exitCode == 0, "\(inspected.stderr)")
        let json = inspected.json
        #expect(json["dialect"] as? String == "gadgetbridge" && json["form"] as? String == "backup" && json["schemaVersion"] as? Int == 141)
        let hr = try #require((json["tables"] as? [String: [String: Any]])?["COLMI_HEART_RATE_SAMPLE"])
        #expect(hr["rows"] as? Int == 2 * 288 + 3 && hr["first"] as? String == "2026-03-01T00:00:00.000Z" && hr["last"] as? String == "2026-03-02T23:55:00.000Z")
        #expect((json["tables"] as? [String: [String: Any]])?["COLMI_HRV_SUMMARY_SAMPLE"]?["first"] is NSNull)
        let bytes = try #require(json["bytes"] as? [String: Int])
        #expect(bytes["uncompressed"] == (try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) && (bytes["compressed"] ?? 0) < (bytes["uncompressed"] ?? 0))
        #expect((json["devices"] as? [[String: Any]])?.map { $0["status"] as? String } == ["imported", "ignored"])
        let text = try CLI.run(["inspect", file])
        #expect(text.exitCode == 0 && text.stdout.contains("Gadgetbridge database, schema 141"))
        for command in [["verify", file], ["verify", dir.file("backup"), "--json"], ["diff", file, dir.file("backup")], ["tables", file, "-o", dir.file("t")]] {
            let result = try CLI.run(command)
            #expect(result.exitCode == 1 && (result.stdout + result.stderr).contains("only import and inspect read a Gadgetbridge file"), "\(command): \(result.stdout) \(result.stderr)")
        }
    }

    @Test("the overlap with a store the app filled: no reading within ±120 s of the ring's, no overlapping night, no bucket in an hour the store has, days completed")
    func overlapWithPulseLoop() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        // The demo store ends on 2026-03-15 (Berlin); the export covers 03-10 to 03-17.
        try StoreFixtures.demoStore(store, days: 14)
        let file = try Self.history(dir, "Gadgetbridge", .init(days: 8, start: GadgetbridgeFixtures.march1 + 9 * 86_400_000, otherDevice: false, invalidRows: false))
        let old = try StoreSnapshot(store: store)
        let oldIDs = Set((old.rows["measurements"] ?? []).map { $0[0] })
        let json = try Self.importJSON([file, "--store", store, "--merge", "--no-backfill"], zone: "Europe/Berlin")
        let tables = Self.tables(json)
        Self.expectBalanced(tables)
        #expect((tables["COLMI_HEART_RATE_SAMPLE"]?["duplicate"] ?? 0) > 0 && (tables["COLMI_HEART_RATE_SAMPLE"]?["imported"] ?? 0) > 0)
        // The app's nights are not the ring history's to the minute: the Gadgetbridge night runs past them (overlapping).
        #expect((tables["COLMI_SLEEP_SESSION_SAMPLE"]?["duplicate"] ?? 0) + (tables["COLMI_SLEEP_SESSION_SAMPLE"]?["overlapping"] ?? 0) > 0 && (tables["COLMI_ACTIVITY_SAMPLE"]?["duplicate"] ?? 0) > 0)
        let new = try StoreSnapshot(store: store)
        let ringKinds: Set<FieldValue> = [.string("history"), .string("colmi"), .string("ring")]
        var oldByKind: [FieldValue: [Int64]] = [:]
        for row in old.rows["measurements"] ?? [] where ringKinds.contains(row[5]) {
            if case .date(let t) = row[4] { oldByKind[row[1], default: []].append(t) }
        }
        for row in (new.rows["measurements"] ?? []) where !oldIDs.contains(row[0]) {
            guard case .date(let t) = row[4] else { continue }
            #expect(!(oldByKind[row[1]] ?? []).contains { abs($0 - t) <= 120_000 }, "an added \(row[1]) at \(t) duplicates the ring's")
        }
        let sessions = (new.rows["sleepSessions"] ?? []).compactMap { row -> (Int64, Int64)? in
            guard case .date(let s) = row[2], case .date(let e) = row[3] else { return nil }
            return (s, e)
        }.sorted { $0.0 < $1.0 }
        for (a, b) in zip(sessions, sessions.dropFirst()) { #expect(a.1 <= b.0, "overlapping nights \(a) \(b)") }
        let oldStarts = (old.rows["activityBucketSamples"] ?? []).compactMap { row -> Int64? in if case .int(let s) = row[0] { s } else { nil } }
        for row in (new.rows["activityBucketSamples"] ?? []) where row[6] == .date(1_780_000_000_000) {
            guard case .int(let start) = row[0] else { continue }
            #expect(!oldStarts.contains { $0 >= start && $0 < start + 3600 }, "a bucket at \(start) in an hour the store has")
        }
        // A day both hold: its total covers every bucket of the day now in the store.
        let updated = ((json["updated"] as? [String: Int])?["activityDailies"]) ?? 0
        #expect(updated > 0)
        for daily in new.rows["activityDailies"] ?? [] {
            guard case .date(let day) = daily[1], case .int(let steps) = daily[2] else { continue }
            let sum = (new.rows["activityBucketSamples"] ?? []).filter { $0[1] == .date(day) }.reduce(Int64(0)) { total, row in
                if case .int(let s) = row[3] { total + s } else { total }
            }
            #expect(steps >= sum || sum == 0, "the daily of \(day) has \(steps) steps, its buckets \(sum)")
        }
    }

    @Test("import killed with SIGKILL or interrupted with SIGINT while reading the tables or once staged leaves the store as it was, once committed it holds the whole import; from a ZIP, no extracted copy stays (SIGKILL's is swept by the next run)",
          arguments: [SIGKILL, SIGINT])
    func killed(signal: Int32) throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        try StoreFixtures.demoStore(store, days: 2)
        let snapshot = try StoreSnapshot(store: store)
        try GadgetbridgeFixtures.zip(database: try Self.history(dir), to: dir.file("backup"))
        let scratch = dir.file("tmp")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let environment = Self.environment.merging(["TMPDIR": scratch]) { $1 }
        let arguments = ["import", dir.file("backup"), "--store", store, "--merge", "--no-backfill"]
        // What the import gives when left alone.
        try FileManager.default.copyItem(atPath: store, toPath: dir.file("reference"))
        #expect(try CLI.run(["import", dir.file("backup"), "--store", dir.file("reference"), "--merge", "--no-backfill"], environment: environment).exitCode == 0)
        let expected = try StoreSnapshot(store: dir.file("reference"))
        // Reading the COLMI tables (each ring's rows of each table is one point), then staged.
        let tables = try #require(try KillPoints.count(["import", dir.file("backup"), "--store", dir.file("calibration"), "--no-backfill"],
                                                       environment: environment)["gadgetbridge.table"])
        #expect(tables == 8, "one point per table read")
        for point in ["gadgetbridge.table:1", "gadgetbridge.table:\(tables)"] {
            try KillPoints.expectStopped(arguments, at: point, with: signal, environment: environment)
            #expect(try StoreSnapshot(store: store) == snapshot, "killed at \(point)")
            if signal != SIGKILL { #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty, "killed at \(point)") }
        }
        try KillPoints.expectStopped(arguments, at: "import.staged:1", with: signal, environment: environment)
        #expect(try StoreSnapshot(store: store) == snapshot)
        let left = try FileManager.default.contentsOfDirectory(atPath: scratch)
        if signal == SIGKILL {
            #expect(left.contains { $0.hasPrefix("pulse-archive-gadgetbridge-") }, "\(left)")
            #expect(try CLI.run(["inspect", dir.file("backup")], environment: environment).exitCode == 0)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty)
        // Killed after the commit, the store holds the whole import.
        try KillPoints.expectStopped(arguments, at: "import.committed:1", with: signal, environment: environment)
        #expect(try StoreSnapshot(store: store).sameContent(as: expected))
    }
}
