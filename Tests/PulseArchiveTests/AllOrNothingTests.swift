import Foundation
import Testing
@testable import PulseArchive
@testable import PulseStore

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

    /// Starts `arguments`, sends it `signal` after `delay`, and says whether it was still
    /// running (stopped part way) when the signal landed: then it must have ended by that
    /// signal, after saying so when it could (anything but SIGKILL).
    private func stopPartWay(_ arguments: [String], with signal: Int32 = SIGKILL, after delay: Double,
                             environment: [String: String] = [:]) throws -> Bool {
        let process = CLI.process(arguments, environment: environment)
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        Thread.sleep(forTimeInterval: delay)
        kill(process.processIdentifier, signal)
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationReason == .uncaughtSignal else { return false }
        #expect(process.terminationStatus == signal)
        if signal != SIGKILL { #expect(message.contains("Error: interrupted ("), "\(message)") }
        return true
    }

    /// How long `arguments` takes when left alone.
    private func duration(_ arguments: [String]) throws -> Double {
        let start = Date()
        let result = try CLI.run(arguments)
        #expect(result.exitCode == 0, "\(result.stderr)")
        return Date().timeIntervalSince(start)
    }

    /// Tables and document tree of a store, after the next locked command finished any swap a
    /// kill interrupted.
    private func content(of store: String) throws -> (StoreSnapshot, [String: Data]) {
        try PulseStore.withExclusiveAccess(store, create: false) { _ in }
        return (try StoreSnapshot(store: store), try TreeFixture(existing: store).files())
    }

    @Test("import killed with SIGKILL, or interrupted with SIGINT, at 20 points spread through its work: the store holds exactly the old or the new content",
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
        let total = try duration(["import", dir.file("big.json.gz"), "--store", dir.file("calibration"), "--replace", "--no-backfill"])
        var killed = 0, old = 0, new = 0
        for point in 1...20 {
            let wasKilled = try stopPartWay(arguments, with: signal, after: total * Double(point) / 25)
            if wasKilled { killed += 1 }
            let (tables, tree) = try content(of: store)
            if signal != SIGKILL {
                // Interrupted, it removed its staging; a committed document swap was finished above.
                let left = try FileManager.default.contentsOfDirectory(atPath: store).filter { $0.hasPrefix(".staging") }
                #expect(left.isEmpty, "point \(point): \(left) left behind")
            }
            if tables == oldContent.0 && tree == oldContent.1 {
                old += 1
            } else if tables.sameContent(as: newContent.0) && tree == newContent.1 {
                new += 1
                // Back to the old content for the next point.
                #expect(try CLI.run(["import", try latestBackup(store), "--store", store, "--replace", "--no-backfill"]).exitCode == 0)
            } else {
                Issue.record("after a kill at point \(point) the store holds neither the old nor the new content")
            }
        }
        #expect(killed >= 12, "only \(killed) of 20 imports were killed part way")
        #expect(old + new == 20 && old > 0)
        // The next import removes what the killed ones left, and succeeds.
        #expect(try CLI.run(arguments).exitCode == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store).allSatisfy { !$0.hasPrefix(".staging") })
    }

    @Test("verify, inspect and an import into a new store, interrupted with SIGINT part way, leave no scratch file and no half-made store; an ignored SIGHUP stays ignored")
    func interruptedCommandsLeaveNothing() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("big"), days: 45, seed: 9, rawPacketsPerDay: 300)
        let archive = dir.file("big.json.gz")
        _ = try StoreFixtures.export(dir.file("big"), to: archive)
        let scratch = dir.file("tmp")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let environment = ["TMPDIR": scratch]
        for command in [["verify", archive], ["inspect", archive]] {
            let total = try duration(command)
            var stopped = 0
            for point in 1...5 {
                if try stopPartWay(command, with: SIGINT, after: total * Double(point) / 7, environment: environment) { stopped += 1 }
                let left = try FileManager.default.contentsOfDirectory(atPath: scratch)
                #expect(left.isEmpty, "\(command[0]) interrupted at point \(point) left \(left)")
            }
            #expect(stopped >= 3, "only \(stopped) of 5 runs of \(command[0]) were interrupted part way")
        }
        let expected = try content(of: dir.file("big"))
        let total = try duration(["import", archive, "--store", dir.file("calibration"), "--no-backfill"])
        var noStore = 0
        for point in 1...5 {
            let store = dir.file("new\(point)")
            _ = try stopPartWay(["import", archive, "--store", store, "--no-backfill"], with: SIGINT, after: total * Double(point) / 7)
            if !FileManager.default.fileExists(atPath: store) {
                noStore += 1
            } else {
                // Interrupted after its commit: the whole archive is there.
                let (tables, tree) = try content(of: store)
                #expect(tables.sameContent(as: expected.0) && tree == expected.1, "point \(point): a half-made store")
            }
        }
        #expect(noStore > 0)

        // A signal the caller ignores (as `nohup` ignores SIGHUP) stays ignored.
        let verify = ["verify", archive, "--quiet"]
        let verifyTime = try duration(verify)
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "trap '' HUP; exec \"$0\" \"$@\"", CLI.executable] + verify
        shell.standardOutput = FileHandle.nullDevice
        shell.standardError = FileHandle.nullDevice
        try shell.run()
        Thread.sleep(forTimeInterval: verifyTime / 3)
        kill(shell.processIdentifier, SIGHUP)
        shell.waitUntilExit()
        #expect(shell.terminationReason == .exit && shell.terminationStatus == 0)
    }

    @Test("the migration to unique indexes killed with SIGKILL at 20 points: the store is at schema 5 or 6, with the same rows and rowids")
    func killedMigration() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("demo"), days: 45, seed: 9, rawPacketsPerDay: 300)
        let original = dir.file("schema5")
        try StoreFixtures.schema5Store(copying: dir.file("demo"), into: original)
        let before = try StoreFixtures.rawContent(of: original + "/pulse.sqlite")
        #expect(before.version == 5 && (before.rows["rawPackets"]?.count ?? 0) == 45 * 300)
        try FileManager.default.copyItem(atPath: original, toPath: dir.file("calibration"))
        // The first command of the new version migrates, then exports.
        let total = try duration(["export", "--store", dir.file("calibration"), "-o", dir.file("calibration.json.gz")])
        var killed = 0, versions: [Int64: Int] = [:]
        for point in 1...20 {
            let store = dir.file("s\(point)")
            try FileManager.default.copyItem(atPath: original, toPath: store)
            if try stopPartWay(["export", "--store", store, "-o", dir.file("out\(point).json.gz")], after: total * Double(point) / 25) {
                killed += 1
            }
            let after = try StoreFixtures.rawContent(of: store + "/pulse.sqlite")
            versions[after.version, default: 0] += 1
            #expect(after.rows == before.rows, "point \(point): the rows changed (schema \(after.version))")
        }
        #expect(killed >= 12, "only \(killed) of 20 commands were killed part way")
        #expect(versions.keys.allSatisfy { $0 == 5 || $0 == 6 } && versions[5] != nil && versions[6] != nil, "\(versions)")
        // The next command on a store whose migration was killed migrates it, and keeps every row.
        let interrupted = try #require((1...20).first { try StoreFixtures.rawContent(of: dir.file("s\($0)/pulse.sqlite")).version == 5 })
        #expect(try CLI.run(["export", "--store", dir.file("s\(interrupted)"), "-o", dir.file("final.json.gz")]).exitCode == 0)
        let finished = try StoreFixtures.rawContent(of: dir.file("s\(interrupted)/pulse.sqlite"))
        #expect(finished.version == 6 && finished.rows == before.rows)
    }

    /// The newest safety backup of a store.
    private func latestBackup(_ store: String) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: store + "/backups").sorted()
        return store + "/backups/" + names.last!
    }

    @Test("export killed with SIGKILL, or stopped with SIGTERM, at 20 points spread through its work leaves no file at the target",
          arguments: [SIGKILL, SIGTERM])
    func killedExport(signal: Int32) throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("big"), days: 45, seed: 9, rawPacketsPerDay: 300)
        let total = try duration(["export", "--store", dir.file("big"), "-o", dir.file("calibration.json.gz")])
        var killed = 0
        for point in 1...20 {
            let target = dir.file("out\(point).json.gz")
            if try stopPartWay(["export", "--store", dir.file("big"), "-o", target], with: signal, after: total * Double(point) / 25) {
                killed += 1
                #expect(!FileManager.default.fileExists(atPath: target), "a partial archive was left at the target (point \(point))")
                if signal != SIGKILL {
                    let partial = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".partial-") }
                    #expect(partial.isEmpty, "point \(point): \(partial) left behind")
                }
            } else {
                #expect(try ArchiveReader(path: target).inspect().rowsFound["rawPackets"] == 45 * 300)
            }
        }
        #expect(killed >= 12, "only \(killed) of 20 exports were killed part way")
        // A later export of the same target succeeds, and removes the dead export's partial file.
        let result = try CLI.run(["export", "--store", dir.file("big"), "-o", dir.file("out1.json.gz")])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".out1.json.gz.partial-") }.isEmpty)
    }
}
