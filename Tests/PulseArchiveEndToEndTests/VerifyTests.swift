import Foundation
import Testing
@testable import PulseArchive
@testable import PulseStore
import PulseSQLite
@testable import PulseDocuments
@testable import PulseVerify
@testable import PulseSystem
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

@Suite("verify through the built binary")
struct VerifyTests {
    private func verify(_ arguments: [String]) throws -> (CLI.Result, [[String: Any]]) {
        let result = try CLI.run(["verify"] + arguments + ["--json"])
        return (result, result.json["problems"] as? [[String: Any]] ?? [])
    }

    private func errors(_ problems: [[String: Any]]) -> [[String: Any]] { problems.filter { $0["severity"] as? String == "error" } }

    @Test("damage in the middle of a gzip archive is verify's first problem, before what the damaged bytes read as (review h98: an id that is no UUID came first)")
    func damageIsTheFirstProblem() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("store"), days: 60)
        _ = try StoreFixtures.export(dir.file("store"), to: dir.file("a.json.gz"))
        let sound = try Data(contentsOf: URL(fileURLWithPath: dir.file("a.json.gz")))
        var misreadBeforeDamage = 0
        // Four bytes zeroed at 20 places: the inflated text changes, then the checksum fails.
        for step in 2..<22 {
            var bytes = sound
            let at = bytes.count * step / 24
            bytes.replaceSubrange(at ..< at + 4, with: [0, 0, 0, 0])
            let (result, problems) = try verify([dir.write("damaged.json.gz", bytes)])
            #expect(result.exitCode == 1, "at \(at): \(result.stderr)")
            let first = try #require(problems.first?["message"] as? String, "at \(at): \(result.stdout)")
            #expect(first.contains("the gzip stream of") && first.contains("damaged.json.gz"), "at \(at): \(problems.prefix(3))")
            if problems.count > 1 { misreadBeforeDamage += 1 }
        }
        #expect(misreadBeforeDamage > 0, "no place gave a problem before the damage: the test no longer shows what it is for")
    }

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

    @Test("verify --json that cannot run (a temporary directory that does not exist, a missing store): one JSON object all the same, ok false, the reason in error and as the one problem, roundTrip null; Error: on stderr, exit 1 (stdout was empty)")
    func cannotRunStillReports() throws {
        let dir = TemporaryDirectory()
        try CommitFallbackTests.demo(dir.file("store"), seed: 13)
        let archive = dir.file("a.json.gz")
        try #require(try CLI.run(["export", "--store", dir.file("store"), "-o", archive, "-q"]).exitCode == 0)
        let runs = [
            try CLI.run(["verify", archive, "--json"], environment: ["TMPDIR": dir.file("no-such-folder"), "SQLITE_TMPDIR": dir.file("no-such-folder")]),
            try CLI.run(["verify", archive, "--store", dir.file("no-store"), "--json"]),
        ]
        for result in runs {
            let error = try #require(result.json["error"] as? String, "stdout: \(result.stdout) stderr: \(result.stderr)")
            #expect(result.exitCode == 1 && result.json["ok"] as? Bool == false && result.json["roundTrip"] is NSNull, "\(result.stdout)")
            #expect((result.json["problems"] as? [[String: Any]])?.first?["message"] as? String == error, "\(result.stdout)")
            #expect(result.stderr.hasPrefix("Error: ") && result.stderr.contains(error), "\(result.stderr)")
        }
        // A store that cannot be looked into is said so, not called missing (with the advice
        // to create one): here a link that loops, as a store of another user is to this one.
        #expect(symlink("loop", dir.file("loop")) == 0)
        let looping = try CLI.run(["verify", archive, "--store", dir.file("loop")])
        #expect(looping.exitCode == 1 && looping.stderr.contains("cannot open the store at \(dir.file("loop")): Too many levels of symbolic links")
                && !looping.stderr.contains("there is no store"), "\(looping.stderr)")
        // The same rule for the other commands' --json.
        let inspect = try CLI.run(["inspect", dir.file("missing.json.gz"), "--json"])
        #expect(inspect.exitCode == 1 && inspect.json["ok"] as? Bool == false && (inspect.json["error"] as? String)?.isEmpty == false, "\(inspect.stdout) \(inspect.stderr)")
    }

    @Test("the machine fails verify part way (no file can be opened any more, set on the paused process): 'verify could not finish', not a damaged archive or a round trip that does not hold; --json says it in error, roundTrip null")
    func machineFailureIsNotTheArchives() throws {
        let dir = TemporaryDirectory()
        try CommitFallbackTests.demo(dir.file("store"), seed: 14)
        let archive = dir.file("a.json.gz")
        try #require(try CLI.run(["export", "--store", dir.file("store"), "-o", archive, "-q"]).exitCode == 0)
        let result = try CommitFallbackTests.paused(["verify", archive, "--json"], at: "read:1", environment: [:]) { pid in
            // The lowest free descriptor made the limit: the next open of any file fails (EMFILE).
            let open = Set(try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").compactMap(Int.init))
            let limit = (0...).first { !open.contains($0) }!
            let prlimit = Process()
            prlimit.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
            prlimit.arguments = ["--pid", String(pid), "--nofile=\(limit):\(limit)"]
            try prlimit.run()
            prlimit.waitUntilExit()
            try #require(prlimit.terminationStatus == 0, "prlimit failed")
        }
        #expect(result.reached && result.exitCode == 1, "\(result.stderr)")
        let json = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
        #expect((json["error"] as? String ?? "").contains("verify could not finish"), "\(result.stdout)")
        #expect(json["ok"] as? Bool == false && json["roundTrip"] is NSNull, "\(result.stdout)")
        #expect(result.stderr.contains("Error: verify could not finish") && result.stderr.contains("Too many open files"), "\(result.stderr)")
    }

    @Test("a file that cannot be opened: exit 1, the reason, and no empty table of rows")
    func unopenableFile() throws {
        let dir = TemporaryDirectory()
        let result = try CLI.run(["verify", dir.file("absent.json.gz"), "--quiet"])
        #expect(result.exitCode == 1)
        #expect(result.stdout.contains("error: cannot open \(dir.file("absent.json.gz"))"), "\(result.stdout)")
        #expect(!result.stdout.contains("problems"), "\(result.stdout)")
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

    @Test("bytes after the gzip stream, or a second member, are an error found after every table was read: the report lists them all")
    func bytesAfterTheStream() throws {
        let dir = TemporaryDirectory()
        #expect(try CLI.run(["demo", "--store", dir.file("demo"), "--days", "20"]).exitCode == 0)
        #expect(try CLI.run(["export", "--store", dir.file("demo"), "-o", dir.file("a.json.gz")]).exitCode == 0)
        let (sound, _) = try verify([dir.file("a.json.gz")])
        let tables = try #require(sound.json["tables"] as? [String: Int])
        let archive = try Data(contentsOf: URL(fileURLWithPath: dir.file("a.json.gz")))
        for (name, appended) in [("byte", Data("X".utf8)), ("member", archive)] {
            let path = dir.write("appended-\(name).json.gz", archive + appended)
            let (result, problems) = try verify([path])
            #expect(result.exitCode == 1 && errors(problems).contains { ($0["message"] as? String ?? "").contains("after the end of its gzip stream") }, "\(name): \(problems)")
            #expect(result.json["tables"] as? [String: Int] == tables, "\(name): \(result.json["tables"] ?? "none")")
            #expect(result.json["tablesComplete"] as? Bool == false)
        }
        #expect(sound.json["tablesComplete"] as? Bool == true)
        // A cut file: the tables before the cut, said to be only those.
        let cut = dir.write("cut.json.gz", archive.prefix(archive.count / 2))
        let (partial, cutProblems) = try verify([cut])
        // The cut is placed in the entry it fell in, and its table given.
        #expect(errors(cutProblems).contains { $0["table"] as? String != nil && ($0["message"] as? String ?? "").contains("cut short (in ") }, "\(cutProblems)")
        let partialTables = try #require(partial.json["tables"] as? [String: Int])
        #expect(partial.exitCode == 1 && partial.json["tablesComplete"] as? Bool == false && partialTables.count < tables.count, "\(partialTables)")
        let human = try CLI.run(["verify", cut])
        #expect(human.stdout.contains("(what was read before the error below; the rest of the file was not)"), "\(human.stdout)")
        // The version came first in the file, so the cut one still says what it is.
        #expect(human.stdout.hasPrefix("Verifying \(cut) (format 2, gzip)\n"), "\(human.stdout)")
    }

    @Test("a key repeated inside a document is named as such, and the read goes on past the document to report the rest")
    func repeatedKeyInADocument() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 5)
        #expect(try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("a.json"), "--compression", "none"]).exitCode == 0)
        let text = try String(contentsOfFile: dir.file("a.json"), encoding: .utf8)
        let range = try #require(text.range(of: #"\{"document":\{"#, options: .regularExpression))
        let edited = text.replacingCharacters(in: range, with: #"{"document":{"x":{"a":1,"a":[2,{"b":3}]},"#)
            .replacingOccurrences(of: #""settings":{"#, with: #""settings":{"a.dup":"{\"a\":1,\"a\":2}","#)
        let path = dir.write("repeated.json", edited)
        let inspected = try CLI.run(["inspect", path])
        #expect(inspected.exitCode == 1 && inspected.stderr.contains(#"documentStubs[0].document: the key "a" appears twice in one object"#), "\(inspected.stderr)")
        let (result, problems) = try verify([path])
        #expect(result.exitCode == 1 && result.json["tablesComplete"] as? Bool == true, "\(problems)")
        #expect(Set(errors(problems).map { $0["message"] as? String ?? "" }) == [#"documentStubs[0].document: the key "a" appears twice in one object"#,
                                                                                  #"settings.a.dup: the stored blob: the key "a" appears twice in one object"#], "\(problems)")
        // A setting whose value the scanner cannot read is named, and its table given.
        let setting = dir.write("setting.json", text.replacingOccurrences(of: #""settings":{"#, with: #""settings":{"zz.x":{"a":tru},"#))
        let (broken1, settingProblems) = try verify([setting])
        #expect(broken1.exitCode == 1 && errors(settingProblems).contains { $0["table"] as? String == "settings" && ($0["message"] as? String ?? "").contains("settings.zz.x: invalid JSON") },
                "\(settingProblems)")
        // Broken between two rows (a missing comma): placed before the next row, and the rows
        // read before it are listed.
        let between = dir.write("between.json", text.replacingOccurrences(of: #"},{"#, with: "} {"))
        let (stoppedBetween, betweenProblems) = try verify([between])
        #expect(stoppedBetween.exitCode == 1 && errors(betweenProblems).contains { ($0["message"] as? String ?? "").contains("[1]: invalid JSON") && $0["table"] as? String != nil },
                "\(betweenProblems)")
        #expect((stoppedBetween.json["tables"] as? [String: Int])?.values.contains(1) == true, "\(stoppedBetween.json["tables"] ?? "")")
        // A name with a line break keeps each problem on one line, in the text and in --json.
        let twice = dir.write("twice.json", text.replacingOccurrences(of: #""attachments":["#, with: #""attachments":[{"base64":"AAAA","file":"x\ny.jpg"},{"base64":"AAAA","file":"x\ny.jpg"},"#))
        let twiceText = try CLI.run(["verify", twice])
        #expect(twiceText.exitCode == 1 && twiceText.stdout.contains(#"the attachment name "x\u{A}y.jpg" appears twice"#), "\(twiceText.stdout)")
        let (_, twiceProblems) = try verify([twice])
        #expect(errors(twiceProblems).allSatisfy { !($0["message"] as? String ?? "").contains("\n") }, "\(twiceProblems)")
        // Broken JSON in the envelope is placed by the member it is in or after.
        let counts = dir.write("counts.json", text.replacingOccurrences(of: #""counts":{"#, with: #""counts":{"x":1:"#))
        let (_, countsProblems) = try verify([counts])
        #expect(errors(countsProblems).contains { $0["table"] as? String == "counts" && ($0["message"] as? String ?? "").contains(#"in "counts": invalid JSON"#) }, "\(countsProblems)")
        let afterTable = dir.write("after.json", text.replacingOccurrences(of: #"],"rawPackets""#, with: #"];"rawPackets""#))
        let (_, afterProblems) = try verify([afterTable])
        #expect(errors(afterProblems).contains { $0["table"] is NSNull && ($0["message"] as? String ?? "").contains(#"after "measurements": invalid JSON"#) }, "\(afterProblems)")
        // A file name with a line break keeps the report's first line one line.
        let oddName = dir.write("odd\nverify: OK.json", text)
        #expect(try CLI.run(["verify", oddName]).stdout.hasPrefix(#"Verifying \#(dir.path)/odd\u{A}verify: OK.json (format 2"#))
        // What stops the read names the table it stopped in, in --json as in the text.
        let broken = dir.write("broken.json", text.replacingOccurrences(of: #""measurements":[{"#, with: #""measurements":[{"x":01,"#))
        let (stopped, stoppedProblems) = try verify([broken])
        #expect(stopped.exitCode == 1 && errors(stoppedProblems).contains { $0["table"] as? String == "measurements" && ($0["message"] as? String ?? "").contains("measurements[0]: invalid JSON") },
                "\(stoppedProblems)")
    }

    @Test("counts that disagree with the rows are an error")
    func countsMismatch() throws {
        let dir = TemporaryDirectory()
        let text = try BadArchives.validText().replacingOccurrences(of: #""measurements":2,"#, with: #""measurements":3,"#)
        let (result, problems) = try verify([dir.write("counts.json", text)])
        #expect(result.exitCode == 1)
        #expect(errors(problems).contains { $0["table"] as? String == "measurements" && ($0["message"] as? String ?? "").contains("declares 3 rows but holds 2") })
    }

    @Test("a count of no table is a warning naming it, exit 0; the Android port's SQL names are not")
    func countOfNoTable() throws {
        let dir = TemporaryDirectory()
        // An Android SQL name in the app's dialect names no table there either.
        let text = try BadArchives.validText().replacingOccurrences(of: #""counts":{"#, with: #""counts":{"nosuch":1,"raw_packets":1,"#)
        let (result, problems) = try verify([dir.write("counts.json", text)])
        #expect(result.exitCode == 0, "\(problems)")
        for name in ["nosuch", "raw_packets"] {
            #expect(problems.contains { $0["severity"] as? String == "warning" && $0["message"] as? String == "counts names \"\(name)\", which is no table (ignored)" }, "\(problems)")
        }
        let (android, androidProblems) = try verify([Repository.sampleAndroid])
        #expect(android.exitCode == 0 && !androidProblems.contains { ($0["message"] as? String ?? "").contains("which is no table") }, "\(androidProblems)")
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

    @Test("a UUID the store keeps in lower case is the same UUID as the export's upper-case one: verify --store of the store against its own export passes; another UUID is a change")
    func uuidCaseIsNoChange() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 3)
        let database = try SQLiteDatabase(path: dir.file("s/pulse.sqlite"), create: false)
        try database.execute(#"UPDATE "sleepStageBlocks" SET "sessionId" = lower("sessionId")"#)
        database.close()
        _ = try StoreFixtures.export(dir.file("s"), to: dir.file("s.json.gz"))
        let text = try CLI.shell("gzip -dc s.json.gz", in: dir.path).stdout
        #expect(text.contains(#""sessionId":""#) && text.range(of: #""sessionId":"[0-9A-F-]*[a-f]"#, options: .regularExpression) == nil)
        let (same, _) = try verify([dir.file("s.json.gz"), "--store", dir.file("s")])
        #expect(same.exitCode == 0 && (same.json["storeDiff"] as? [String: [String: Int]])?["sleepStageBlocks"] == ["missing": 0, "extra": 0, "changed": 0], "\(same.json)")
        let edit = try SQLiteDatabase(path: dir.file("s/pulse.sqlite"), create: false)
        try edit.execute(#"UPDATE "sleepStageBlocks" SET "sessionId" = '00000000-0000-0000-0000-000000000000' WHERE rowid = 1"#)
        edit.close()
        let (changed, _) = try verify([dir.file("s.json.gz"), "--store", dir.file("s")])
        #expect(changed.exitCode == 1 && (changed.json["storeDiff"] as? [String: [String: Int]])?["sleepStageBlocks"]?["changed"] == 1, "\(changed.json)")
    }

    @Test("a format-1 export against its store: the readiness history it cannot carry is a warning, not an error; a lost readiness row of a format-2 archive is an error")
    func formatOneAgainstItsStore() throws {
        let dir = TemporaryDirectory()
        #expect(try CLI.run(["demo", "--store", dir.file("s"), "--days", "30", "--end", "2026-03-15"]).exitCode == 0)
        let stored = try StoreSnapshot(store: dir.file("s")).rows["readinessDailies"]?.count ?? 0
        #expect(stored > 0)
        #expect(try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("f1.json.gz"), "--format-version", "1"]).exitCode == 0)
        let (result, problems) = try verify([dir.file("f1.json.gz"), "--store", dir.file("s")])
        #expect(result.exitCode == 0 && errors(problems).isEmpty, "\(problems)")
        let diff = try #require(result.json["storeDiff"] as? [String: [String: Int]])
        #expect(diff["readinessDailies"] == ["missing": 0, "extra": stored, "changed": 0])
        #expect(problems.contains { $0["severity"] as? String == "warning" && $0["table"] as? String == "readinessDailies"
            && ($0["message"] as? String ?? "").contains("format 1 cannot carry") })

        // Format 2 carries the history: a store with a readiness row the archive lacks differs.
        _ = try StoreFixtures.export(dir.file("s"), to: dir.file("f2.json.gz"))
        let database = try SQLiteDatabase(path: dir.file("s/pulse.sqlite"), create: false)
        try database.execute(#"DELETE FROM "readinessDailies" WHERE rowid = (SELECT min(rowid) FROM "readinessDailies")"#)
        let (changed, changedProblems) = try verify([dir.file("f2.json.gz"), "--store", dir.file("s")])
        #expect(changed.exitCode == 1)
        #expect(errors(changedProblems).contains { $0["table"] as? String == "readinessDailies" }, "\(changedProblems)")
    }

    @Test("the CI recipe of docs/verify.md, run as written, exports, verifies and passes on a sound store")
    func ciRecipe() throws {
        let doc = try String(contentsOfFile: Repository.root + "/docs/verify.md", encoding: .utf8)
        let recipe = try #require(doc.components(separatedBy: "## A CI recipe").last)
        let script = try #require(recipe.components(separatedBy: "```sh\n").dropFirst().first?.components(separatedBy: "```").first)
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("store"), days: 5)
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        shell.arguments = ["bash", dir.write("ci.sh", script)]
        shell.currentDirectoryURL = URL(fileURLWithPath: dir.path)
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = URL(fileURLWithPath: CLI.executable).deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["PULSE_STORE"] = dir.file("store")
        shell.environment = environment
        let out = Pipe()
        shell.standardOutput = out
        shell.standardError = FileHandle.nullDevice
        try shell.run()
        let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 0, "\(printed)")
        #expect(printed.hasPrefix("backup backups/pulseloop-backup-") && printed.contains("verified"), "\(printed)")
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.file("verify-report.json")))) as? [String: Any]
        #expect(report?["ok"] as? Bool == true && report?["roundTrip"] as? Bool == true)
    }

    @Test("--store attaches the store read-only, whatever characters its path holds")
    func storeAttachedReadOnly() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("a store %41 ?#ü")
        try StoreFixtures.demoStore(store, days: 2)
        _ = try StoreFixtures.export(store, to: dir.file("s.json.gz"))
        let roundTrip = try RollingRoundTrip(comparingWith: (store + "/pulse.sqlite", immutable: false))
        #expect(try roundTrip.database.integer(#"SELECT count(*) FROM store."measurements""#) > 0)
        #expect(throws: (any Error).self) { try roundTrip.database.execute(#"DELETE FROM store."measurements""#) }
        let (result, _) = try verify([dir.file("s.json.gz"), "--store", store])
        #expect(result.exitCode == 0, "\(result.stderr)")
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

@Suite("The round trip's comparisons")
struct RoundTripComparisonTests {
    @Test("a row the temporary store gives back changed is counted, and so are a setting, an attachment and a document")
    func detectsDifferences() throws {
        let dir = TemporaryDirectory()
        let roundTrip = try RollingRoundTrip(comparingWith: nil)
        let table = ArchiveTable.measurements
        // A store whose column loses precision (a double in a TEXT column keeps 15 digits),
        // the kind of change a restore must never make unnoticed.
        let create = StoreSchema.createTable(table, unique: false).replacingOccurrences(of: #""value" NOT NULL"#, with: #""value" TEXT NOT NULL"#)
        try roundTrip.database.execute(#"DROP TABLE "measurements"; "# + create)
        try roundTrip.begin(.table(table))
        for i in 0..<3 {
            var row = RowFactory.minimal(table, index: i)
            if i == 1 { row[table.fieldIndex("value")!] = .double(0.1 + 0.2) }
            try roundTrip.add(row, of: table, at: i)
        }
        try roundTrip.end()
        #expect(roundTrip.differences == ["measurements": 1])

        #expect(try roundTrip.addSetting("pulseloop.metricprefs.v1", #"{"distanceUnit":"km"}"#))
        #expect(try !roundTrip.addSetting("pulseloop.metricprefs.v1", "{}"), "a repeated key is refused")
        #expect(try roundTrip.addAttachment("photo.jpg", [1, 2, 3]))
        let split = try DocumentPath("Splits/01J0000000000000000000000A.json")
        try roundTrip.addDocument(split, bytes: Array(#"{"schemaVersion":3}"#.utf8))
        try roundTrip.database.execute(#"UPDATE "settings" SET "value" = '{}'"#)
        try roundTrip.database.execute(#"DELETE FROM "attachments""#)
        // The only document in the round trip's spool, changed in place (its file has no name).
        let spooled = try #require(roundTrip.tree.file)
        #expect(Array(#"{"schemaVersion":4}"#.utf8).withUnsafeBytes { pwrite(spooled.fd, $0.baseAddress, $0.count, 0) } == 19)
        #expect(try roundTrip.finish().documents.count == 1)
        #expect(roundTrip.differences == ["measurements": 1, "settings": 1, "attachments": 1, "documents": 1], "\(roundTrip.differences)")
        #expect(roundTrip.failure == nil)
    }

    @Test("comparing a column in place agrees with reading it: every type, null, empty and non-ASCII text")
    func columnHolds() throws {
        let database = try SQLiteDatabase(path: ":memory:", create: true)
        #expect(SQLiteDatabase.resolvingDirectory(":memory:") == ":memory:", "an in-memory database is no file: resolved, it became ./:memory: and a second run found its table")
        try database.execute(#"CREATE TABLE t (i INTEGER, d REAL, b INTEGER, s TEXT, u TEXT, n TEXT, e TEXT)"#)
        let stored: [FieldValue] = [.int(-42), .double(0.1 + 0.2), .bool(true), .string("Grüße, \u{0}\"/"), .string(RowFactory.uuid(9)), .null, .string("")]
        let types: [FieldType] = [.int, .double, .bool, .string, .uuid, .string, .string]
        try database.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)").run(stored)
        let others: [FieldValue] = [.int(42), .double(0.3), .bool(false), .string("Grüße, \u{0}\"/ "), .string(RowFactory.uuid(8)), .string(""), .null]
        let select = try database.prepare("SELECT * FROM t")
        #expect(try select.step())
        for (i, type) in types.enumerated() {
            for candidate in [stored[i], others[i]] {
                #expect(select.column(Int32(i), as: type, holds: candidate) == (select.value(at: Int32(i), as: type) == candidate), "column \(i), \(candidate)")
            }
            #expect(select.column(Int32(i), as: type, holds: stored[i]))
            #expect(!select.column(Int32(i), as: type, holds: others[i]))
        }
    }

    @Test("a restored row the writer cannot write stops the round trip with a message naming it")
    func refusedRow() throws {
        let dir = TemporaryDirectory()
        let roundTrip = try RollingRoundTrip(comparingWith: nil)
        let table = ArchiveTable.devices
        var row = RowFactory.minimal(table, index: 0)
        row[table.fieldIndex("name")!] = .null
        try roundTrip.begin(.table(table))
        try roundTrip.add(row, of: table, at: 7)
        #expect(roundTrip.failure?.contains("devices[7] could not be restored") == true, "\(roundTrip.failure ?? "nil")")
    }

    @Test("row text: canonical text is accepted as it is; other text is read back and compared")
    func rowText() throws {
        let table = ArchiveTable.measurements
        let codec = RowTextCodec(table: table)
        let row = RowFactory.minimal(table, index: 4)
        let canonical = try ByteBuffer.collecting { try RowEncoding(table: table).append(row, index: 0, to: &$0) }
        #expect(try codec.writes(row, as: canonical[...], index: 0))
        let spaced = Array(String(decoding: canonical, as: UTF8.self).replacingOccurrences(of: ",", with: ", ").utf8)
        #expect(try !codec.writes(row, as: spaced[...], index: 0))
        #expect(try codec.writtenAndReadBack(row, index: 0) == row)
    }
}
