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

    /// Starts `arguments`, kills it with SIGKILL after `delay`, and says whether it was still
    /// running (killed part way) when the signal landed.
    private func killPartWay(_ arguments: [String], after delay: Double) throws -> Bool {
        let process = CLI.process(arguments)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        Thread.sleep(forTimeInterval: delay)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal
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

    @Test("import killed with SIGKILL at 20 points spread through its work: the store holds exactly the old or the new content")
    func killedImport() throws {
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
            let wasKilled = try killPartWay(arguments, after: total * Double(point) / 25)
            if wasKilled { killed += 1 }
            let (tables, tree) = try content(of: store)
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
            if try killPartWay(["export", "--store", store, "-o", dir.file("out\(point).json.gz")], after: total * Double(point) / 25) {
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

    @Test("export killed with SIGKILL at 20 points spread through its work leaves no file at the target")
    func killedExport() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("big"), days: 45, seed: 9, rawPacketsPerDay: 300)
        let total = try duration(["export", "--store", dir.file("big"), "-o", dir.file("calibration.json.gz")])
        var killed = 0
        for point in 1...20 {
            let target = dir.file("out\(point).json.gz")
            if try killPartWay(["export", "--store", dir.file("big"), "-o", target], after: total * Double(point) / 25) {
                killed += 1
                #expect(!FileManager.default.fileExists(atPath: target), "a partial archive was left at the target (point \(point))")
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
