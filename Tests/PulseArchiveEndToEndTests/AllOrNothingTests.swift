import Foundation
import Testing
import PulseSQLite
@testable import PulseArchive
@testable import PulseStore
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

@Suite("All or nothing: refused files and kill -9 leave the store as it was")
struct AllOrNothingTests {
    @Test("importing each refused input into a store with data exits 1 and leaves pulse.sqlite byte-identical")
    func refusedInputsLeaveStore() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s")
        try StoreFixtures.demoStore(store, days: 3)
        let before = try #require(StoreFixtures.bytes(store + "/pulse.sqlite"))
        let snapshot = try StoreSnapshot(store: store)
        for (name, bytes, message) in try BadArchives.all() {
            let path = dir.write(name.replacingOccurrences(of: " ", with: "-"), Data(bytes))
            for mode in ["--replace", "--merge"] {
                let result = try CLI.run(["import", path, "--store", store, mode])
                #expect(result.exitCode == 1, "\(name) \(mode)")
                #expect(result.stderr.contains(message), "\(name) \(mode): \(result.stderr)")
                #expect(result.stderr.contains(path), "\(name) \(mode) does not name the file: \(result.stderr)")
                #expect(StoreFixtures.bytes(store + "/pulse.sqlite") == before, "\(name) \(mode) changed pulse.sqlite")
            }
        }
        #expect(try StoreSnapshot(store: store) == snapshot)
        #expect(!FileManager.default.fileExists(atPath: store + "/backups"), "no safety backup for a refused file")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: store).filter { $0.hasPrefix(".staging") }
        #expect(leftovers.isEmpty)
    }

    @Test("a refused import into a missing store leaves no store behind")
    func refusedImportCreatesNothing() throws {
        let dir = TemporaryDirectory()
        let path = dir.write("bad.json", "{\"formatVersion\": 1}")
        let result = try CLI.run(["import", path, "--store", dir.file("new-store")])
        #expect(result.exitCode == 1)
        #expect(!FileManager.default.fileExists(atPath: dir.file("new-store")))
    }

    @Test("two imports into one new store, started together 40 times: one restores, the other is refused, and the store is always there")
    func concurrentImportsIntoNewStore() throws {
        let dir = TemporaryDirectory()
        for run in 0..<40 {
            let store = dir.file("new\(run)")
            let imports = (0..<2).map { _ in CLI.process(["import", Repository.sampleFormat1, "--store", store, "--no-backfill", "-q"]) }
            for process in imports {
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
            }
            for process in imports { process.waitUntilExit() }
            let codes = imports.map(\.terminationStatus).sorted()
            // The one refused as busy removed the store under the one restoring it.
            #expect(codes == [0, 1], "run \(run): exit codes \(codes)")
            #expect(FileManager.default.fileExists(atPath: store + "/pulse.sqlite"), "run \(run): the store is gone")
        }
    }

    @Test("a store path that is a file is refused with a message that says so, and the file is left as it was")
    func storePathIsAFile() throws {
        let dir = TemporaryDirectory()
        let file = dir.write("not-a-store", "mine")
        for store in [file, file + "/inner"] {
            let result = try CLI.run(["import", Repository.sampleFormat2, "--store", store])
            #expect(result.exitCode == 1)
            #expect(result.stderr.contains("cannot create the directory \(file): a file of that name is in the way"), "\(result.stderr)")
        }
        #expect(StoreFixtures.bytes(file) == Data("mine".utf8))
    }

    /// Tables and document tree of a store, after the next locked command finished any swap a
    /// kill interrupted.
    private func content(of store: String) throws -> (StoreSnapshot, [String: Data]) {
        try PulseStore.withExclusiveAccess(store, create: false) { _ in }
        return (try StoreSnapshot(store: store), try TreeFixture(existing: store).files())
    }

    @Test("import killed with SIGKILL, or interrupted with SIGINT, at 20 points through its work (reading, staged, the safety backup, committed): the store holds exactly the old content before the commit, the new after",
          arguments: [SIGKILL, SIGINT])
    func killedImport(signal: Int32) throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("big"), days: 45, seed: 9, rawPacketsPerDay: 300)
        _ = try StoreFixtures.export(dir.file("big"), to: dir.file("big.json.gz"))
        let newContent = try content(of: dir.file("big"))
        let store = dir.file("s")
        try StoreFixtures.demoStore(store, days: 2)
        let oldContent = try content(of: store)
        let arguments = ["import", dir.file("big.json.gz"), "--store", store, "--replace", "--no-backfill"]
        try FileManager.default.copyItem(atPath: store, toPath: dir.file("calibration"))
        let counts = try KillPoints.count(["import", dir.file("big.json.gz"), "--store", dir.file("calibration"), "--replace", "--no-backfill"])
        let reads = try #require(counts["read"]), writes = try #require(counts["write"], "the safety backup writes")
        #expect(reads >= 16, "only \(reads) reads: the archive is too small to spread the points")
        // Before the commit the old content must stay; from the commit on, the new one is there.
        let beforeCommit = KillPoints.spread("read", 16, over: reads) + ["import.staged:1"] + KillPoints.spread("write", 2, over: writes)
        let points = beforeCommit.map { ($0, false) } + [("import.committed:1", true)]
        #expect(points.count == 20)
        for (point, committed) in points {
            try KillPoints.expectStopped(arguments, at: point, with: signal)
            let (tables, tree) = try content(of: store)
            if signal != SIGKILL {
                // Interrupted, it removed its staging; a committed document swap was finished above.
                let left = try FileManager.default.contentsOfDirectory(atPath: store).filter { $0.hasPrefix(".staging") }
                #expect(left.isEmpty, "\(point): \(left) left behind")
                // Nor the `backups` folder made for a safety backup it did not finish.
                #expect(committed || !FileManager.default.fileExists(atPath: store + "/backups"), "\(point): an empty backups folder left")
            }
            if committed {
                #expect(tables.sameContent(as: newContent.0) && tree == newContent.1, "killed at \(point), the store does not hold the new content")
                // Back to the old content for the next point.
                #expect(try CLI.run(["import", try latestBackup(store), "--store", store, "--replace", "--no-backfill"]).exitCode == 0)
            } else {
                #expect(tables == oldContent.0 && tree == oldContent.1, "killed at \(point), the store does not hold the old content")
            }
        }
        // The next import removes what the killed ones left, and succeeds.
        #expect(try CLI.run(arguments).exitCode == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store).allSatisfy { !$0.hasPrefix(".staging") })
    }

    @Test("SIGTERM while a committed import moves its document tree into place: the swap is finished first, then the process ends by the signal saying the store holds the archive, with no staging folder and no swap left to do")
    func interruptedDocumentSwap() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("big"), days: 30, seed: 9)
        _ = try StoreFixtures.export(dir.file("big"), to: dir.file("big.json.gz"))
        let newContent = try content(of: dir.file("big"))
        let store = dir.file("s")
        try StoreFixtures.demoStore(store, days: 2)
        let stopped = try KillPoints.stop(["import", dir.file("big.json.gz"), "--store", store, "--replace", "--no-backfill"], at: "documents.swap:1", with: SIGTERM)
        #expect(stopped.reached && stopped.reason == .uncaughtSignal && stopped.status == SIGTERM, "\(stopped.stderr)")
        #expect(stopped.stderr.contains("Error: interrupted (SIGTERM) after its commit: the store holds the archive"), "\(stopped.stderr)")
        // Looked at before any command opens the store (which would finish a swap left to do).
        let left = try FileManager.default.contentsOfDirectory(atPath: store).filter { $0.hasPrefix(".staging") }
        #expect(left.isEmpty, "\(left) left in the store")
        let database = try SQLiteDatabase(path: store + "/pulse.sqlite", create: false)
        let pending = try database.integer(#"SELECT count(*) FROM "documentSwaps""#)
        database.close()
        #expect(pending == 0, "a document swap left to do")
        let (tables, tree) = try content(of: store)
        #expect(tables.sameContent(as: newContent.0) && tree == newContent.1, "the store does not hold the archive")
    }

    @Test("demo interrupted once its rows are committed (SIGTERM) or stopped by a fatal signal there says the store holds them and documents and scores may be missing, not that it removed everything")
    func demoInterruptedAfterItsRows() throws {
        let dir = TemporaryDirectory()
        for (index, signal) in [SIGTERM, SIGABRT].enumerated() {
            let store = dir.file("demo\(index)")
            let stopped = try KillPoints.stop(["demo", "--store", store, "--days", "20"], at: "commit:1", with: signal)
            #expect(stopped.reached, "\(stopped.stderr)")
            #expect(stopped.stderr.contains("after its commit: the store \(store) holds the demo's rows; its workout documents and readiness scores may be missing: remove it to start again"),
                    "\(signal): \(stopped.stderr)")
            #expect(!stopped.stderr.contains("removed\n") && !stopped.stderr.contains("temporary files are removed"), "\(signal): \(stopped.stderr)")
            #expect(FileManager.default.fileExists(atPath: store + "/pulse.sqlite"))
        }
    }

    @Test("verify, inspect and an import into a new store, interrupted with SIGINT part way (inspect also as SQLite creates a temporary file), leave no scratch file and no half-made store; an ignored SIGHUP stays ignored")
    func interruptedCommandsLeaveNothing() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("big"), days: 45, seed: 9, rawPacketsPerDay: 300)
        let archive = dir.file("big.json.gz")
        _ = try StoreFixtures.export(dir.file("big"), to: archive)
        let scratch = dir.file("tmp")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let environment = ["TMPDIR": scratch]
        for command in [["verify", archive], ["inspect", archive]] {
            let reads = try #require(try KillPoints.count(command, environment: environment)["read"])
            for point in KillPoints.spread("read", 5, over: reads) {
                try KillPoints.expectStopped(command, at: point, with: SIGINT, environment: environment)
                let left = try FileManager.default.contentsOfDirectory(atPath: scratch)
                #expect(left.isEmpty, "\(command[0]) interrupted at \(point) left \(left)")
            }
        }
        // The instant SQLite has created a file it is about to unlink (inspect's unnamed
        // database spilling to disk): the interruption waits for the unlink.
        try KillPoints.expectStopped(["inspect", archive], at: "sqlite.temporary:1", with: SIGINT, environment: environment)
        let left = try FileManager.default.contentsOfDirectory(atPath: scratch)
        #expect(left.isEmpty, "inspect interrupted as SQLite created a temporary file left \(left)")
        let expected = try content(of: dir.file("big"))
        let reads = try #require(try KillPoints.count(["import", archive, "--store", dir.file("calibration"), "--no-backfill"])["read"])
        // Interrupted while reading or once staged, no store; after the commit, the whole
        // archive. Staged, the signal is pending when SIGCONT resumes the main thread, and a
        // commit never runs with a stop signal pending, however late the watcher takes it.
        enum Outcome { case none, whole }
        let points = KillPoints.spread("read", 3, over: reads).map { ($0, Outcome.none) } + [("import.staged:1", .none), ("import.committed:1", .whole)]
        for (index, (point, outcome)) in points.enumerated() {
            // Under folders it makes: they go with the store, or stay with it.
            let store = dir.file("new\(index)/a/b/store")
            let stopped = try KillPoints.expectStopped(["import", archive, "--store", store, "--no-backfill"], at: point, with: SIGINT)
            // What the message says must be what happened: after the commit the archive stands
            // (a retry would be refused by the now non-empty store), before it nothing does.
            if outcome == .whole {
                #expect(stopped.stderr.contains("after its commit: the store holds the archive"), "\(point): \(stopped.stderr)")
                #expect(!stopped.stderr.contains("backfill"), "\(point): --no-backfill, yet the message speaks of the backfill: \(stopped.stderr)")
            } else if outcome == .none {
                #expect(stopped.stderr.contains("; its temporary files are removed"), "\(point): \(stopped.stderr)")
            }
            let exists = FileManager.default.fileExists(atPath: store)
            #expect(outcome != .none || !FileManager.default.fileExists(atPath: dir.file("new\(index)")), "\(point): a store or its folders were left")
            #expect(outcome != .whole || exists, "\(point): no store after the commit")
            if exists {
                let (tables, tree) = try content(of: store)
                #expect(tables.sameContent(as: expected.0) && tree == expected.1, "\(point): a half-made store")
            }
        }

        // A signal the caller ignores (as `nohup` ignores SIGHUP) stays ignored: sent while the
        // command is stopped part way, it changes nothing, and the command succeeds.
        let hup = try KillPoints.stop(["verify", archive, "--quiet"], at: "read:2", with: SIGHUP,
                                      shellPrefix: ["/bin/sh", "-c", "trap '' HUP; exec \"$0\" \"$@\""])
        #expect(hup.reached && hup.reason == .exit && hup.status == 0, "\(hup.stderr)")
    }

    @Test("a stop signal that reaches an export or a key file just before its commit ends it by the signal with nothing written, whatever primitive takes the name",
          arguments: [SIGINT, SIGTERM, SIGHUP, SIGQUIT])
    func signalBeforeTheCommit(_ signal: Int32) throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        try StoreFixtures.demoStore(store, days: 3)
        // Stopped at `commit` and continued with the signal pending: the main thread goes on
        // to take the name at once, and under load it used to win the race with the thread
        // that takes the signal (exit 0, the archive written after the user's Ctrl-C).
        for refuse in ["", "link,rename-noreplace"] {
            let environment = refuse.isEmpty ? [:] : ["PULSE_ARCHIVE_TEST_REFUSE": refuse]
            let target = dir.file("out-\(signal)-\(refuse.isEmpty ? "link" : "placeholder").json.gz")
            let stopped = try KillPoints.expectStopped(["export", "--store", store, "-o", target], at: "commit:1", with: signal, environment: environment)
            #expect(stopped.stderr.contains("its temporary files are removed"), "\(stopped.stderr)")
            #expect(!FileManager.default.fileExists(atPath: target), "an export interrupted before its commit left \(target)")
            let key = dir.file("key-\(signal)-\(refuse.isEmpty ? "link" : "placeholder").txt")
            try KillPoints.expectStopped(["keygen", "-o", key], at: "commit:1", with: signal, environment: environment)
            #expect(!FileManager.default.fileExists(atPath: key), "keygen interrupted before its commit left \(key)")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") }
        #expect(left.isEmpty, "temporary files left: \(left)")
    }

    @Test("the migrations from schema 5 killed with SIGKILL at 20 points (10 in their transactions, 10 in the export after them): the store is at the schema of the last step committed, with the same rows and rowids")
    func killedMigration() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("demo"), days: 45, seed: 9, rawPacketsPerDay: 300)
        let original = dir.file("schema5")
        try StoreFixtures.schema5Store(copying: dir.file("demo"), into: original)
        let before = try StoreFixtures.rawContent(of: original + "/pulse.sqlite")
        #expect(before.version == 5 && (before.rows["rawPackets"]?.count ?? 0) == 45 * 300)
        try FileManager.default.copyItem(atPath: original, toPath: dir.file("calibration"))
        // The first command of the new version migrates, then exports.
        let counts = try KillPoints.count(["export", "--store", dir.file("calibration"), "-o", dir.file("calibration.json.gz")])
        let statements = try #require(counts["migration.statement"]), writes = try #require(counts["write"])
        // Steps 6 (`uniqueKeysAsIndexes`) and 7 (`doublesKeepTheirSign`) run, each in its own
        // transaction: a kill in step 6's statements leaves schema 5, in step 7's schema 6.
        let firstStep = StoreMigration.all[5].sql.count
        let points = KillPoints.spread("migration.statement", 10, over: statements).map { point in
            (point, Int64(Int(point.split(separator: ":").last!)! <= firstStep ? 5 : 6))
        } + KillPoints.spread("write", 10, over: writes).map { ($0, Int64(StoreMigration.all.count)) }
        for (index, (point, version)) in points.enumerated() {
            let store = dir.file("s\(index)")
            try FileManager.default.copyItem(atPath: original, toPath: store)
            try KillPoints.expectStopped(["export", "--store", store, "-o", dir.file("out\(index).json.gz")], at: point, with: SIGKILL)
            let after = try StoreFixtures.rawContent(of: store + "/pulse.sqlite")
            #expect(after.version == version, "killed at \(point): schema \(after.version)")
            #expect(after.rows == before.rows, "killed at \(point): the rows changed (schema \(after.version))")
        }
        // The next command on a store whose migration was killed migrates it, and keeps every row.
        #expect(try CLI.run(["export", "--store", dir.file("s0"), "-o", dir.file("final.json.gz")]).exitCode == 0)
        let finished = try StoreFixtures.rawContent(of: dir.file("s0/pulse.sqlite"))
        #expect(finished.version == Int64(StoreMigration.all.count) && finished.rows == before.rows)
    }

    /// The newest safety backup of a store.
    private func latestBackup(_ store: String) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: store + "/backups").sorted()
        return store + "/backups/" + names.last!
    }

    @Test("imports under every descriptor limit from 5 to 16 (--replace, --merge, into a new store): each either imports or leaves the store as it was, and never a staging beside it (a failure for want of a descriptor left it until the next command)")
    func outOfDescriptorsLeavesNoStaging() throws {
        let dir = TemporaryDirectory()
        try CommitFallbackTests.demo(dir.file("other"), seed: 15)
        try CommitFallbackTests.demo(dir.file("original"), seed: 16)
        let archive = dir.file("other.json.gz"), before = dir.file("before.json.gz")
        try #require(try CLI.run(["export", "--store", dir.file("other"), "-o", archive, "-q"]).exitCode == 0)
        try #require(try CLI.run(["export", "--store", dir.file("original"), "-o", before, "-q"]).exitCode == 0)
        var failures = 0
        for limit in 5...16 {
            for mode in ["--replace", "--merge", "new"] {
                let store = dir.file("s-\(limit)\(mode)")
                if mode != "new" { try CLI.shell("cp -a '\(dir.file("original"))' '\(store)'", expectingSuccess: true) }
                let arguments = ["'\(archive)'", "--store", "'\(store)'", "--no-backfill", "-q"] + (mode == "new" ? [] : [mode])
                let result = try CLI.shell("ulimit -n \(limit); exec \"$PA\" import " + arguments.joined(separator: " "))
                let said = "ulimit -n \(limit), \(mode): exit \(result.exitCode): \(result.stderr)"
                #expect(result.exitCode == 0 || result.exitCode == 1, "\(said)")
                if result.exitCode == 1 { failures += 1 }
                let left = ((try? FileManager.default.contentsOfDirectory(atPath: store)) ?? []).filter { $0.hasPrefix(".staging") }
                #expect(left.isEmpty, "\(said); left \(left)")
                if mode == "new" {
                    // A new store is made whole or not at all.
                    #expect(result.exitCode == 0 || !FileManager.default.fileExists(atPath: store), "\(said)")
                } else if result.exitCode == 1 {
                    let unchanged = try CLI.run(["verify", before, "--store", store, "-q"])
                    #expect(unchanged.exitCode == 0, "\(said); the store changed: \(unchanged.stdout)")
                }
            }
        }
        #expect(failures > 0, "no limit from 5 to 16 made an import fail: the test proves nothing here")
    }

    @Test("export killed with SIGKILL, or stopped with SIGTERM, at 20 points spread through its writes leaves no file at the target",
          arguments: [SIGKILL, SIGTERM])
    func killedExport(signal: Int32) throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("big"), days: 45, seed: 9, rawPacketsPerDay: 300)
        let writes = try #require(try KillPoints.count(["export", "--store", dir.file("big"), "-o", dir.file("calibration.json.gz")])["write"])
        #expect(writes >= 20, "only \(writes) writes: the store is too small to spread the points")
        for (index, point) in KillPoints.spread("write", 20, over: writes).enumerated() {
            let target = dir.file("out\(index).json.gz")
            try KillPoints.expectStopped(["export", "--store", dir.file("big"), "-o", target], at: point, with: signal)
            #expect(!FileManager.default.fileExists(atPath: target), "a partial archive was left at the target (\(point))")
            if signal != SIGKILL {
                let partial = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".partial-") }
                #expect(partial.isEmpty, "\(point): \(partial) left behind")
            }
        }
        // A later export of the same target succeeds, and removes the dead export's partial file.
        let result = try CLI.run(["export", "--store", dir.file("big"), "-o", dir.file("out0.json.gz")])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".out0.json.gz.partial-") }.isEmpty)
        #expect(try ArchiveReader(path: dir.file("out0.json.gz")).inspect().rowsFound["rawPackets"] == 45 * 300)
    }
}
