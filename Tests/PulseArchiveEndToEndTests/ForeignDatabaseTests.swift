import Foundation
import Testing
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// `--store` pointed at a directory whose `pulse.sqlite` is another program's database: every
/// command refuses it and leaves the file byte for byte as it was (no schema written into it,
/// no WAL mode set), even the commands that only read.
@Suite("A foreign database at --store")
struct ForeignDatabaseTests {
    @Test("export, tables --store, verify --store, readiness and import --merge refuse another program's database and leave it as it is")
    func foreignDatabaseIsLeftAlone() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("foreign"), withIntermediateDirectories: false)
        let database = dir.file("foreign/pulse.sqlite")
        let made = try CLI.collect({
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["sqlite3", database, "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');"]
            return process
        }())
        try #require(made.exitCode == 0, "sqlite3: \(made.stderr)")
        let before = try Data(contentsOf: URL(fileURLWithPath: database))
        let commands: [[String]] = [
            ["export", "--store", dir.file("foreign"), "-o", dir.file("out.json.gz"), "--quiet"],
            ["tables", "--store", dir.file("foreign"), "-o", dir.file("tables"), "--quiet"],
            ["verify", Repository.sampleFormat1, "--store", dir.file("foreign"), "--quiet"],
            ["readiness", "--store", dir.file("foreign"), "--backfill"],
            ["import", Repository.sampleFormat1, "--store", dir.file("foreign"), "--merge", "--quiet"],
        ]
        for arguments in commands {
            let result = try CLI.run(arguments)
            #expect(result.exitCode == 1, "\(arguments.first!): exit \(result.exitCode) \(result.stderr)")
            #expect(result.stderr.contains("is not a PulseLoop store") && result.stderr.contains("notes"), "\(arguments.first!): \(result.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == before, "\(arguments.first!) changed the foreign database")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.file("foreign")).filter { $0 != ".lock" }
        #expect(left == ["pulse.sqlite"], "\(left)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("out.json.gz")) && !FileManager.default.fileExists(atPath: dir.file("tables")))
    }

    /// SQL that rebuilds `cycleDays` as a hand edit might, with its rows and its index.
    static func rebuiltCycleDays(notes: String = "TEXT", check: String = "", after: String = "") -> String {
        """
        CREATE TABLE c2 AS SELECT * FROM cycleDays; DROP TABLE cycleDays;
        CREATE TABLE cycleDays ("dateString" TEXT NOT NULL, "date" INTEGER NOT NULL, "isPeriod" INTEGER NOT NULL, "isDisturbed" INTEGER NOT NULL,
          "disturbedAutoDetected" INTEGER NOT NULL, "notes" \(notes), "updatedAt" INTEGER NOT NULL\(check))\(after);
        INSERT INTO cycleDays SELECT * FROM c2; DROP TABLE c2;
        CREATE UNIQUE INDEX "cycleDaysUniqueKey" ON "cycleDays" ("dateString")
        """
    }

    @Test("a store a hand edit left without a column, a table or a key's unique index, with a trigger or a schema version no step leaves, is refused by every reader and by import, named, and never read with a made-up value")
    func editedSchemaIsRefused() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("store"), days: 2)
        try FileManager.default.createDirectory(atPath: dir.file("victim"), withIntermediateDirectories: false)
        dir.write("victim/keep.txt", "mine")
        for (sql, problem) in [
            // SQLite's legacy rule read `"name"` as the string 'name' once the column was gone:
            // every profile exported with the name "name".
            ("ALTER TABLE userProfiles DROP COLUMN name", #"cannot read the store STORE: its table "userProfiles" has no column "name""#),
            ("ALTER TABLE cycleDays DROP COLUMN updatedAt", #"cannot read the store STORE: its table "cycleDays" has no column "updatedAt""#),
            ("DROP TABLE coachSummaries", #"cannot read the store STORE: it has no table "coachSummaries""#),
            ("DROP TABLE documentSwaps", #"cannot read the store STORE: it has no table "documentSwaps""#),
            ("DROP INDEX measurementsUniqueKey", #"cannot read the store STORE: its table "measurements" has no unique index on "id""#),
            ("CREATE TABLE m2 AS SELECT * FROM mealEntries; DROP TABLE mealEntries; ALTER TABLE m2 RENAME TO mealEntries", #"cannot read the store STORE: its table "mealEntries" has no unique index on "id""#),
            // A trigger would run inside an import: one like this emptied a table during a merge.
            ("CREATE TRIGGER t1 AFTER INSERT ON measurements BEGIN DELETE FROM batterySamples; END", #"cannot read the store STORE: it has a trigger, "t1""#),
            // A version no step leaves (it stopped every command with SIGILL), or one below the
            // steps the store records as run.
            // Rebuilt tables a hand edit can leave: an affinity that converts what an import
            // writes, a CHECK that makes INSERT OR IGNORE skip rows, no rowid, a view.
            (Self.rebuiltCycleDays(notes: "NUMERIC"), #"cannot read the store STORE: its table "cycleDays" declares the column "notes" NUMERIC, where this tool makes it TEXT"#),
            (Self.rebuiltCycleDays(check: ", CHECK (isPeriod IN (0, 1))"), #"cannot read the store STORE: its table "cycleDays" has a CHECK constraint"#),
            (Self.rebuiltCycleDays(check: ", PRIMARY KEY (dateString)", after: " WITHOUT ROWID"), #"cannot read the store STORE: its table "cycleDays" is a table without rowid"#),
            ("CREATE TABLE c2 AS SELECT * FROM cycleDays; DROP TABLE cycleDays; CREATE VIEW cycleDays AS SELECT * FROM c2", #"cannot read the store STORE: its "cycleDays" is a view, not a table"#),
            (#"DROP INDEX cycleDaysUniqueKey; CREATE UNIQUE INDEX cycleDaysUniqueKey ON cycleDays (dateString COLLATE NOCASE)"#,
             #"cannot read the store STORE: its table "cycleDays" has no unique index on "dateString" comparing its bytes"#),
            ("DROP TABLE documentSwaps; CREATE TABLE documentSwaps (other TEXT)", #"cannot read the store STORE: its table "documentSwaps" has no column "staging""#),
            // A pending swap is finished by moving and removing folders by its name: only the
            // name an import gives it, inside the store (`..` removed the store's parent).
            ("INSERT INTO documentSwaps VALUES ('..')", #"cannot read the store STORE: it records an unfinished document swap from "..""#),
            ("INSERT INTO documentSwaps VALUES ('../victim')", #"it records an unfinished document swap from "../victim""#),
            ("INSERT INTO documentSwaps VALUES ('Splits')", #"it records an unfinished document swap from "Splits""#),
            ("INSERT INTO documentSwaps VALUES (CAST('.staging-1' AS BLOB))", #"it records an unfinished document swap from ".staging-1""#),
            ("PRAGMA user_version = -1", "STORE/pulse.sqlite says schema version -1, which no version of this tool writes"),
            ("PRAGMA user_version = 6", "STORE/pulse.sqlite says schema version 6 but records"),
            // Not "another program's tables": the steps it records are this tool's.
            ("PRAGMA user_version = 0", "STORE/pulse.sqlite says schema version 0 but records"),
        ] {
            let store = dir.file("edited")
            try? FileManager.default.removeItem(atPath: store)
            try FileManager.default.copyItem(atPath: dir.file("store"), toPath: store)
            dir.write("edit.sql", sql + ";\n")
            try CLI.shell("sqlite3 edited/pulse.sqlite < edit.sql", in: dir.path)
            for arguments in [["export", "--store", store, "-o", dir.file("out.json.gz")], ["export", "--store", store, "--compression", "none", "-o", "-"],
                              ["tables", "--store", store, "-o", dir.file("tables")], ["verify", Repository.sampleFormat1, "--store", store]] {
                let result = try CLI.run(arguments)
                #expect(result.exitCode == 1 && result.stdout.isEmpty, "\(sql): \(arguments.first!): exit \(result.exitCode) \(result.stdout.prefix(200))")
                #expect(result.stderr.contains(problem.replacingOccurrences(of: "STORE", with: store)) && result.stderr.contains("edited by another program"),
                        "\(sql): \(arguments.first!): \(result.stderr)")
            }
            #expect(!FileManager.default.fileExists(atPath: dir.file("out.json.gz")) && !FileManager.default.fileExists(atPath: dir.file("tables")))
            // An import into it is refused before anything changes.
            let before = FileManager.default.contents(atPath: store + "/pulse.sqlite")
            let merge = try CLI.run(["import", Repository.sampleFormat1, "--store", store, "--merge", "-q"])
            #expect(merge.exitCode == 1 && merge.stderr.contains("edited by another program"), "\(sql): import: \(merge.stderr)")
            #expect(FileManager.default.contents(atPath: store + "/pulse.sqlite") == before, "\(sql): the import changed the store")
            #expect(FileManager.default.fileExists(atPath: dir.file("victim/keep.txt")) && FileManager.default.fileExists(atPath: store + "/Splits"), "\(sql)")
        }
        // The same rebuild with the types this tool declares is read as before.
        let rebuilt = dir.file("rebuilt")
        try FileManager.default.copyItem(atPath: dir.file("store"), toPath: rebuilt)
        dir.write("rebuild.sql", Self.rebuiltCycleDays() + ";\n")
        try CLI.shell("sqlite3 rebuilt/pulse.sqlite < rebuild.sql && \"$PA\" export --store store -o r1.json -q --compression none && \"$PA\" export --store rebuilt -o r2.json -q --compression none && cmp r1.json r2.json",
                      environment: PlainExportTests.epoch, in: dir.path)
        // SQLite names columns in any letter case: a column renamed so is read as it was.
        let renamed = dir.file("renamed")
        try FileManager.default.copyItem(atPath: dir.file("store"), toPath: renamed)
        try CLI.shell("sqlite3 renamed/pulse.sqlite 'ALTER TABLE userProfiles RENAME COLUMN name TO NAME'", in: dir.path)
        try CLI.shell("\"$PA\" export --store store -o a.json -q --compression none && \"$PA\" export --store renamed -o b.json -q --compression none && cmp a.json b.json",
                      environment: PlainExportTests.epoch, in: dir.path)
    }

}
