import Foundation
import Testing
@testable import GadgetbridgeTestSupport
import PulseSQLite
@testable import PulseTestSupport

/// How `import` and `inspect` reach the database file: through a link, with a `-wal` beside it
/// (docs/gadgetbridge.md, "How the file is read").
@Suite struct GadgetbridgeInputTests {
    @Test("a damaged database on standard input is named standard input, not the private copy it was read from, which is gone when the message is read (review h97)")
    func damagedDatabaseOnStandardInput() throws {
        let dir = TemporaryDirectory()
        dir.write("header-only", Data("SQLite format 3\u{0}".utf8))
        for command in ["import - --store store", "inspect -"] {
            let result = try CLI.shell("\"$PA\" \(command) < header-only", in: dir.path)
            #expect(result.exitCode == 1 && result.stderr.contains("Error: standard input is damaged or not a database: cannot prepare PRAGMA quick_check: file is not a database"),
                    "\(command): \(result.stderr)")
            #expect(!result.stderr.contains("pulse-archive-gadgetbridge") && !result.stderr.contains("/tmp"), "\(command): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("store")))
    }

    @Test("a copy of standard input stopped by the file-size limit names the copy and the limit, not standard input, which is only read (review h98)")
    func spoolPastTheFileSizeLimit() throws {
        let dir = TemporaryDirectory()
        let file = try GadgetbridgeTests.history(dir)
        let result = try CLI.shell("ulimit -f 1 && \"$PA\" inspect - < \(file)", in: dir.path)
        #expect(result.exitCode == 1 && result.stderr.contains("cannot write the copy of standard input in the temporary directory: File too large"), "\(result.stderr)")
        #expect(result.stderr.contains("this process may write files of at most 512 bytes: the file-size limit, ulimit -f"), "\(result.stderr)")
    }

    @Test("a database reached through a symbolic link (absolute and relative) is read as the file itself")
    func symlinkedDatabase() throws {
        let dir = TemporaryDirectory()
        let file = try GadgetbridgeTests.history(dir)
        try FileManager.default.createSymbolicLink(atPath: dir.file("abslink"), withDestinationPath: file)
        try FileManager.default.createSymbolicLink(atPath: dir.file("rellink"), withDestinationPath: "Gadgetbridge")
        for link in ["abslink", "rellink"] {
            let inspected = try CLI.run(["inspect", dir.file(link), "--json"])
            #expect(inspected.exitCode == 0, "\(link): \(inspected.stderr)")
            #expect(inspected.json["dialect"] as? String == "gadgetbridge")
        }
        let json = try GadgetbridgeTests.importJSON([dir.file("abslink"), "--store", dir.file("store"), "--no-backfill"])
        #expect(GadgetbridgeTests.tables(json)["COLMI_HEART_RATE_SAMPLE"]?["imported"] == 864)
    }

    @Test("rows only in an un-checkpointed -wal beside the database are imported (from a private copy); the user's database and -wal keep their bytes and times, no -shm appears")
    func writeAheadLog() throws {
        let dir = TemporaryDirectory()
        let live = try GadgetbridgeTests.history(dir, "live", .init(days: 1, otherDevice: false, invalidRows: false))
        // A live database, as `adb pull` copies it: the new rows still in the -wal.
        let database = try SQLiteDatabase(path: live, create: false)
        try database.execute("PRAGMA wal_autocheckpoint = 0")
        do {
            let mode = try database.prepare("PRAGMA journal_mode")
            #expect(try mode.step() && mode.text(at: 0) == "wal")
        }
        let later = GadgetbridgeFixtures.march1 + 2 * 86_400_000
        for minute in Int64(0)..<10 {
            try database.execute(#"INSERT INTO "COLMI_HEART_RATE_SAMPLE" VALUES (\#(later + minute * 60_000), 1, 1, 77)"#)
        }
        try FileManager.default.createDirectory(atPath: dir.file("pulled"), withIntermediateDirectories: true)
        let file = dir.file("pulled/Gadgetbridge")
        try FileManager.default.copyItem(atPath: live, toPath: file)
        try FileManager.default.copyItem(atPath: live + "-wal", toPath: file + "-wal")
        database.close()
        func state(_ path: String) throws -> (Data?, Date?) {
            (FileManager.default.contents(atPath: path), try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)
        }
        let before = [try state(file), try state(file + "-wal")]
        #expect((before[1].0?.count ?? 0) > 0)

        let inspected = try CLI.run(["inspect", file, "--json"])
        #expect(inspected.exitCode == 0, "\(inspected.stderr)")
        #expect(inspected.json["writeAheadLog"] as? Bool == true)
        let tables = try #require(inspected.json["tables"] as? [String: [String: Any]])
        #expect(tables["COLMI_HEART_RATE_SAMPLE"]?["rows"] as? Int == 288 + 10)
        let json = try GadgetbridgeTests.importJSON([file, "--store", dir.file("store"), "--no-backfill"])
        #expect(GadgetbridgeTests.tables(json)["COLMI_HEART_RATE_SAMPLE"]?["imported"] == 288 + 10)
        #expect((json["gadgetbridge"] as? [String: Any])?["writeAheadLog"] as? Bool == true)
        let text = try CLI.run(["inspect", file])
        #expect(text.stdout.contains("Read with its write-ahead log"), "\(text.stdout)")

        let after = [try state(file), try state(file + "-wal")]
        #expect(after[0].0 == before[0].0 && after[0].1 == before[0].1 && after[1].0 == before[1].0 && after[1].1 == before[1].1)
        #expect(!FileManager.default.fileExists(atPath: file + "-shm"))
    }
}

/// What the hostile review found in how a file's devices, tables and values are read.
@Suite struct GadgetbridgeOddFileTests {
    static func edited(_ dir: TemporaryDirectory, _ sql: [String], history: GadgetbridgeFixtures.History = .init(days: 1, invalidRows: false)) throws -> String {
        let file = try GadgetbridgeTests.history(dir, "Gadgetbridge", history)
        let database = try SQLiteDatabase(path: file, create: false)
        for statement in sql { try database.execute(statement) }
        database.close()
        return file
    }

    @Test("one ring listed twice (its MAC in another case): inspect and import refuse it alike, in a Gadgetbridge user's words")
    func ringListedTwice() throws {
        let dir = TemporaryDirectory()
        let file = try Self.edited(dir, [#"INSERT INTO "DEVICE" VALUES (3, 'R02_1A2B', 'Colmi', 'f0:a1:b2:c3:d4:e5', 0, 'COLMI_R02', NULL, NULL, NULL)"#])
        for arguments in [["inspect", file], ["import", file, "--store", dir.file("store"), "--timezone", "UTC"]] {
            let result = try CLI.run(arguments)
            #expect(result.exitCode == 1 && result.stderr.contains("lists the ring F0:A1:B2:C3:D4:E5 twice in its DEVICE table"), "\(arguments[0]): \(result.stderr)")
            #expect(!result.stderr.contains("devices[1]"))
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("store") + "/pulse.sqlite"))
    }

    @Test("a ZIP holding database/Gadgetbridge twice is refused naming the repeated entry, not with libzip's words alone")
    func zipEntryTwice() throws {
        let dir = TemporaryDirectory()
        let file = try GadgetbridgeTests.history(dir)
        try GadgetbridgeFixtures.zip(database: file, to: dir.file("two"), extra: [("database/Gadgetbridgf", Array("x".utf8))])
        // The second name made equal to the first in the local header and the central directory.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.file("two"))))
        let from = Array("database/Gadgetbridgf".utf8), to = Array("database/Gadgetbridge".utf8)
        var index = 0, replaced = 0
        while index + from.count <= bytes.count {
            if Array(bytes[index..<index + from.count]) == from { bytes.replaceSubrange(index..<index + from.count, with: to); replaced += 1 }
            index += 1
        }
        #expect(replaced == 2)
        try Data(bytes).write(to: URL(fileURLWithPath: dir.file("two")))
        let result = try CLI.run(["inspect", dir.file("two")])
        #expect(result.exitCode == 1 && result.stderr.contains("two entries of the same name") && result.stderr.contains("database/Gadgetbridge"), "\(result.stderr)")
    }

    @Test("COLMI table names in lower case and a view named like a table are read as the tables (SQLite's names ignore case)")
    func tableNameCaseAndView() throws {
        let dir = TemporaryDirectory()
        let file = try Self.edited(dir, [
            #"ALTER TABLE "COLMI_HEART_RATE_SAMPLE" RENAME TO "hr_tmp""#, #"ALTER TABLE "hr_tmp" RENAME TO "colmi_heart_rate_sample""#,
            #"ALTER TABLE "COLMI_STRESS_SAMPLE" RENAME TO "stress_rows""#, #"CREATE VIEW "COLMI_STRESS_SAMPLE" AS SELECT * FROM "stress_rows""#,
        ])
        let json = try GadgetbridgeTests.importJSON([file, "--store", dir.file("store"), "--no-backfill"])
        let tables = GadgetbridgeTests.tables(json)
        #expect(tables["COLMI_HEART_RATE_SAMPLE"]?["imported"] == 288 && tables["COLMI_STRESS_SAMPLE"]?["imported"] == 48, "\(tables)")
    }

    @Test("--timezone UTC is reported as UTC; GMT+14 (an offset Foundation and POSIX read with opposite signs) is a usage error")
    func timeZoneNames() throws {
        let dir = TemporaryDirectory()
        let file = try GadgetbridgeTests.history(dir, "Gadgetbridge", .init(days: 1))
        let json = try GadgetbridgeTests.importJSON([file, "--store", dir.file("store"), "--no-backfill"], zone: "UTC")
        #expect((json["gadgetbridge"] as? [String: Any])?["timezone"] as? String == "UTC")
        let offset = try CLI.run(["import", file, "--store", dir.file("other"), "--timezone", "GMT+14"])
        #expect(offset.exitCode == 64 && offset.stderr.hasPrefix("Error:") && offset.stderr.contains("GMT+14"), "\(offset.stderr)")
    }

    @Test("a newline or escape in a device's name is shown escaped in the text reports; HR 70.5 is invalid as STEPS 5.5 is (integers where the schema says INTEGER)")
    func namesAndIntegers() throws {
        let dir = TemporaryDirectory()
        let file = try Self.edited(dir, [
            #"UPDATE "DEVICE" SET "NAME" = 'Mi' || char(10) || 'Band' || char(27) || '[2J' WHERE "_id" = 2"#,
            #"UPDATE "COLMI_HEART_RATE_SAMPLE" SET "HEART_RATE" = 70.5 WHERE "TIMESTAMP" = \#(GadgetbridgeFixtures.march1) AND "DEVICE_ID" = 1"#,
        ])
        let inspected = try CLI.run(["inspect", file])
        #expect(inspected.exitCode == 0 && inspected.stdout.contains(#"Mi\nBand\u{1B}[2J"#), "\(inspected.stdout)")
        let imported = try CLI.run(["import", file, "--store", dir.file("store"), "--no-backfill", "--timezone", "UTC"], environment: GadgetbridgeTests.environment)
        #expect(imported.exitCode == 0 && imported.stdout.contains(#"Ignored Mi\nBand\u{1B}[2J"#), "\(imported.stdout)")
        let json = try GadgetbridgeTests.importJSON([file, "--store", dir.file("json"), "--no-backfill"])
        #expect(GadgetbridgeTests.tables(json)["COLMI_HEART_RATE_SAMPLE"]?["invalid"] == 1)
    }
}
