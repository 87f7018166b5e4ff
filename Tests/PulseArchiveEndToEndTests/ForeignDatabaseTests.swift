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

    @Test("a store a hand edit left without a column, a table or a key's unique index is refused by every reader, named, and never read with a made-up value")
    func editedSchemaIsRefused() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("store"), days: 2)
        for (sql, problem) in [
            // SQLite's legacy rule read `"name"` as the string 'name' once the column was gone:
            // every profile exported with the name "name".
            ("ALTER TABLE userProfiles DROP COLUMN name", #"its table "userProfiles" has no column "name""#),
            ("ALTER TABLE cycleDays DROP COLUMN updatedAt", #"its table "cycleDays" has no column "updatedAt""#),
            ("DROP TABLE coachSummaries", #"it has no table "coachSummaries""#),
            ("DROP INDEX measurementsUniqueKey", #"its table "measurements" has no unique index on "id""#),
            ("CREATE TABLE m2 AS SELECT * FROM mealEntries; DROP TABLE mealEntries; ALTER TABLE m2 RENAME TO mealEntries", #"its table "mealEntries" has no unique index on "id""#),
        ] {
            let store = dir.file("edited")
            try? FileManager.default.removeItem(atPath: store)
            try FileManager.default.copyItem(atPath: dir.file("store"), toPath: store)
            try CLI.shell("sqlite3 edited/pulse.sqlite '\(sql)'", in: dir.path)
            for arguments in [["export", "--store", store, "-o", dir.file("out.json.gz")], ["export", "--store", store, "--compression", "none", "-o", "-"],
                              ["tables", "--store", store, "-o", dir.file("tables")], ["verify", Repository.sampleFormat1, "--store", store]] {
                let result = try CLI.run(arguments)
                #expect(result.exitCode == 1 && result.stdout.isEmpty, "\(sql): \(arguments.first!): exit \(result.exitCode) \(result.stdout.prefix(200))")
                #expect(result.stderr.contains("cannot read the store \(store): \(problem)") && result.stderr.contains("edited by another program"),
                        "\(sql): \(arguments.first!): \(result.stderr)")
            }
            #expect(!FileManager.default.fileExists(atPath: dir.file("out.json.gz")) && !FileManager.default.fileExists(atPath: dir.file("tables")))
        }
    }

}
