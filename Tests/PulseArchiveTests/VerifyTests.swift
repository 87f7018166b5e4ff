import Foundation
import Testing
@testable import PulseArchive
@testable import PulseStore
@testable import PulseDocuments

@Suite("verify through the built binary")
struct VerifyTests {
    private func verify(_ arguments: [String]) throws -> (CLI.Result, [[String: Any]]) {
        let result = try CLI.run(["verify"] + arguments + ["--json"])
        return (result, result.json["problems"] as? [[String: Any]] ?? [])
    }

    private func errors(_ problems: [[String: Any]]) -> [[String: Any]] { problems.filter { $0["severity"] as? String == "error" } }

    @Test("every refused input of the codec issue: exit 1, ok false, the reason in an error")
    func refusedInputs() throws {
        let dir = TemporaryDirectory()
        for (name, bytes, message) in try BadArchives.all() {
            let path = dir.write(name.replacingOccurrences(of: " ", with: "-"), Data(bytes))
            let (result, problems) = try verify([path])
            #expect(result.exitCode == 1, "\(name)")
            #expect(result.json["ok"] as? Bool == false, "\(name): \(result.stdout) \(result.stderr)")
            #expect(errors(problems).contains { ($0["message"] as? String ?? "").contains(message) }, "\(name): \(problems)")
        }
    }

    @Test("the sample archives and a fresh export of the demo store: exit 0, no errors, the round trip holds")
    func soundArchives() throws {
        let dir = TemporaryDirectory()
        #expect(try CLI.run(["demo", "--store", dir.file("demo"), "--days", "30", "--end", "2026-03-15"]).exitCode == 0)
        #expect(try CLI.run(["export", "--store", dir.file("demo"), "-o", dir.file("demo.json.gz")]).exitCode == 0)
        for path in [Repository.sampleFormat1, Repository.sampleFormat2, dir.file("demo.json.gz")] {
            let (result, problems) = try verify([path])
            #expect(result.exitCode == 0, "\(path): \(problems)")
            #expect(errors(problems).isEmpty && result.json["ok"] as? Bool == true && result.json["roundTrip"] as? Bool == true)
            #expect(((result.json["tables"] as? [String: Int])?["measurements"] ?? 0) > 0)
        }
        let (demo, _) = try verify([dir.file("demo.json.gz"), "--store", dir.file("demo")])
        #expect(demo.exitCode == 0)
        let diff = try #require(demo.json["storeDiff"] as? [String: [String: Int]])
        #expect(diff["measurements"] == ["missing": 0, "extra": 0, "changed": 0] && diff["workouts"] == ["missing": 0, "extra": 0, "changed": 0])
        let (plain, plainProblems) = try verify([Repository.sampleFormat1])
        #expect(plain.exitCode == 0 && plainProblems.contains { ($0["message"] as? String ?? "").contains("no checksum") })
        let human = try CLI.run(["verify", dir.file("demo.json.gz")])
        #expect(human.exitCode == 0 && human.stdout.contains("verify: OK") && human.stdout.contains("measurements"))
    }

    @Test("counts that disagree with the rows are an error")
    func countsMismatch() throws {
        let dir = TemporaryDirectory()
        let text = try BadArchives.validText().replacingOccurrences(of: #""measurements":2,"#, with: #""measurements":3,"#)
        let (result, problems) = try verify([dir.write("counts.json", text)])
        #expect(result.exitCode == 1)
        #expect(errors(problems).contains { $0["table"] as? String == "measurements" && ($0["message"] as? String ?? "").contains("declares 3 rows but holds 2") })
    }

    @Test("an orphan stage block is a warning, exit 0")
    func orphan() throws {
        let dir = TemporaryDirectory()
        var content = InMemoryContent()
        var block = RowFactory.minimal(.sleepStageBlocks, index: 1)
        block[ArchiveTable.sleepStageBlocks.fieldIndex("sessionId")!] = .string(RowFactory.uuid(424_242))
        content.rows["sleepStageBlocks"] = [block]
        try writeArchive(content, to: dir.file("orphan.json.gz"))
        let (result, problems) = try verify([dir.file("orphan.json.gz")])
        #expect(result.exitCode == 0, "\(problems)")
        #expect(problems.contains { $0["severity"] as? String == "warning" && $0["table"] as? String == "sleepStageBlocks" })
    }

    @Test("a store that lost one measurement row: exit 1, storeDiff.measurements.missing == 1")
    func storeLostARow() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 5)
        _ = try StoreFixtures.export(dir.file("s"), to: dir.file("s.json.gz"))
        let database = try SQLiteDatabase(path: dir.file("s/pulse.sqlite"), create: false)
        try database.execute(#"DELETE FROM "measurements" WHERE rowid = (SELECT min(rowid) FROM "measurements")"#)
        try database.execute(#"UPDATE "devices" SET "name" = 'renamed'"#)
        let (result, _) = try verify([dir.file("s.json.gz"), "--store", dir.file("s")])
        #expect(result.exitCode == 1)
        let diff = try #require(result.json["storeDiff"] as? [String: [String: Int]])
        #expect(diff["measurements"]?["missing"] == 1 && diff["measurements"]?["extra"] == 0)
        #expect(diff["devices"]?["changed"] == 1)
        #expect(diff["sleepSessions"] == ["missing": 0, "extra": 0, "changed": 0])
    }

    @Test("a file with five different problems reports all five")
    func fiveProblems() throws {
        let dir = TemporaryDirectory()
        let firstId = RowFactory.uuid(100), secondId = RowFactory.uuid(200)
        var text = try BadArchives.validText()
        text = text.replacingOccurrences(of: #""measurements":2,"#, with: #""measurements":5,"#)                  // 1. counts
        text = text.replacingOccurrences(of: #""file":"photo.jpg""#, with: #""file":"..\/photo.jpg""#)          // 2. unsafe name
        text = text.replacingOccurrences(of: #""totalMinutes":0"#, with: #""totalMinutes":"zero""#)            // 3. wrong type
        if let range = text.range(of: #""timestamp":"[^"]*""#, options: .regularExpression) {                   // 4. bad date
            text.replaceSubrange(range, with: #""timestamp":"yesterday""#)
        }
        if let range = text.range(of: secondId) { text.replaceSubrange(range, with: firstId) }                 // 5. duplicate id
        let (result, problems) = try verify([dir.write("five.json", text)])
        #expect(result.exitCode == 1)
        let messages = errors(problems).compactMap { $0["message"] as? String }
        for phrase in ["declares 5 rows", "unsafe attachment name", "expected an integer, found a string", "unrecognized date \"yesterday\"", "duplicate device entries"] {
            #expect(messages.contains { $0.contains(phrase) }, "missing: \(phrase) in \(messages)")
        }
        #expect(messages.count >= 5)
    }
}

@Suite("The round-trip comparer")
struct RoundTripComparerTests {
    @Test("an archive read back against a store that differs in a row, a setting, an attachment and a document: each is counted")
    func detectsDifferences() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 2)
        _ = try StoreFixtures.export(dir.file("s"), to: dir.file("s.json.gz"))
        try PulseStore.withExclusiveAccess(dir.file("s"), create: false) { store in
            var same = try RoundTripComparer(store: store, database: try SQLiteDatabase(path: store.databasePath, create: false))
            let summary = try ArchiveReader(path: dir.file("s.json.gz")).read(into: &same)
            try same.finish(summary: summary)
            #expect(same.differences.isEmpty, "\(same.differences)")

            try store.database.execute(#"UPDATE "measurements" SET "value" = "value" + 1 WHERE rowid = 3"#)
            try store.database.execute(#"UPDATE "settings" SET "value" = '{}' WHERE "key" = 'pulseloop.metricprefs.v1'"#)
            try store.database.execute(#"DELETE FROM "attachments""#)
            let split = try #require(try DocumentTree(scanning: store.directory).documents.first { $0.kind == .split && !$0.isStub })
            try PulseStore.writeDocument(.object(["schemaVersion": .number("3")]), at: split, storeDirectory: store.directory)
            var changed = try RoundTripComparer(store: store, database: try SQLiteDatabase(path: store.databasePath, create: false))
            try changed.finish(summary: try ArchiveReader(path: dir.file("s.json.gz")).read(into: &changed))
            #expect(changed.differences["measurements"] == 1 && changed.differences["settings"] == 1)
            #expect(changed.differences["attachments"] == 1 && changed.differences["documents"] == 1)
        }
    }
}
