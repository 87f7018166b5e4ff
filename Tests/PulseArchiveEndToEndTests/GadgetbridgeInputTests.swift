import Foundation
import Testing
@testable import GadgetbridgeTestSupport
import PulseSQLite
@testable import PulseTestSupport

/// How `import` and `inspect` reach the database file: through a link, with a `-wal` beside it
/// (docs/gadgetbridge.md, "How the file is read").
@Suite struct GadgetbridgeInputTests {
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
