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

    @Test("import killed with SIGKILL part way: the store opens and holds exactly the old rows")
    func killedImport() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("big"), days: 45, seed: 9, rawPacketsPerDay: 300)
        _ = try StoreFixtures.export(dir.file("big"), to: dir.file("big.json.gz"))
        let store = dir.file("s")
        try StoreFixtures.demoStore(store, days: 2)
        let before = try StoreSnapshot(store: store)
        var killed = 0
        for delay in [0.05, 0.2, 0.4, 0.7, 1.0, 1.5] {
            if try killPartWay(["import", dir.file("big.json.gz"), "--store", store, "--replace", "--no-backfill"], after: delay) {
                killed += 1
                let after = try StoreSnapshot(store: store)
                #expect(after == before, "store changed by an import killed after \(delay) s")
            } else {
                // It finished before the signal: the store must then hold the new content whole.
                #expect(try StoreSnapshot(store: store).sameContent(as: StoreSnapshot(archive: dir.file("big.json.gz"))))
                break
            }
        }
        #expect(killed >= 3, "too few imports were killed part way (\(killed))")
        // The next import cleans up after the killed ones and succeeds.
        let result = try CLI.run(["import", dir.file("big.json.gz"), "--store", store, "--replace"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: store).allSatisfy { !$0.hasPrefix(".staging") })
    }

    @Test("export killed with SIGKILL part way leaves no file at the target")
    func killedExport() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("big"), days: 45, seed: 9, rawPacketsPerDay: 300)
        var killed = 0
        for (i, delay) in [0.05, 0.2, 0.4, 0.7].enumerated() {
            let target = dir.file("out\(i).json.gz")
            if try killPartWay(["export", "--store", dir.file("big"), "-o", target], after: delay) {
                killed += 1
                #expect(!FileManager.default.fileExists(atPath: target), "a partial archive was left at the target")
            } else {
                #expect(try ArchiveReader(path: target).inspect().rowsFound["rawPackets"] == 45 * 300)
            }
        }
        #expect(killed >= 2)
        // A later export of the same target succeeds, and removes the dead export's partial file.
        let result = try CLI.run(["export", "--store", dir.file("big"), "-o", dir.file("out0.json.gz")])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".out0.json.gz.partial-") }.isEmpty)
    }
}
