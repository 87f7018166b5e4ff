import Foundation
import Testing
@testable import PulseArchive
@testable import PulseStore
import PulseSQLite
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// Issue 16: the tool never writes where it should not (links, read-only stores, file-size
/// limits, empty paths, existing charts), and nothing from a file reaches a terminal raw.
@Suite("The tool never writes where it should not")
struct FileSystemEdgeTests {
    // MARK: - Charts

    @Test("readiness --svg onto an existing file is refused before any work, the file and the store untouched")
    func chartNeverReplaces() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 3)
        let backup = dir.write("backup.json.gz", "an archive the user keeps")
        let database = StoreFixtures.bytes(dir.file("s/pulse.sqlite"))
        for target in [backup, dir.file("s/pulse.sqlite")] {
            let result = try CLI.run(["readiness", "--store", dir.file("s"), "--backfill", "--svg", target])
            #expect(result.exitCode == 1 && result.stderr.contains("already exists"), "\(result.stderr)")
        }
        #expect(StoreFixtures.bytes(backup) == Data("an archive the user keeps".utf8))
        #expect(StoreFixtures.bytes(dir.file("s/pulse.sqlite")) == database)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).allSatisfy { !$0.contains(".partial-") })
        let fresh = try CLI.run(["readiness", "--store", dir.file("s"), "--svg", dir.file("new.svg")])
        #expect(fresh.exitCode == 0 && FileManager.default.fileExists(atPath: dir.file("new.svg")), "\(fresh.stderr)")
    }

    // MARK: - Links in the store

    @Test("a dangling pulse.sqlite link is refused: import creates nothing where it points")
    func danglingDatabaseLink() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("s"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: dir.file("s/pulse.sqlite"), withDestinationPath: dir.file("elsewhere.sqlite"))
        let result = try CLI.run(["import", Repository.sampleFormat2, "--store", dir.file("s"), "--no-backfill"])
        #expect(result.exitCode == 1 && result.stderr.contains("pulse.sqlite") && result.stderr.contains("is a symbolic link"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("elsewhere.sqlite")))
        #expect(!FileManager.default.fileExists(atPath: dir.file("s/.lock")))
    }

    @Test("a pulse.sqlite linked to another store's database is neither written nor read")
    func databaseLinkedToAnotherStore() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("other"), days: 2)
        let other = StoreFixtures.bytes(dir.file("other/pulse.sqlite"))
        try FileManager.default.createDirectory(atPath: dir.file("s"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: dir.file("s/pulse.sqlite"), withDestinationPath: dir.file("other/pulse.sqlite"))
        for arguments in [["import", Repository.sampleFormat2, "--replace", "--no-backfill"], ["readiness", "--backfill"],
                          ["export", "-o", dir.file("x.json.gz")], ["readiness"]] {
            let result = try CLI.run(arguments + ["--store", dir.file("s")])
            #expect(result.exitCode == 1 && result.stderr.contains("is a symbolic link"), "\(arguments): \(result.stderr)")
        }
        #expect(StoreFixtures.bytes(dir.file("other/pulse.sqlite")) == other)
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.json.gz")))
    }

    @Test("a .lock or -wal link is refused, and the lock's target is not created")
    func lockAndWALLinks() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 2)
        let database = StoreFixtures.bytes(dir.file("s/pulse.sqlite"))
        try FileManager.default.removeItem(atPath: dir.file("s/.lock"))
        try FileManager.default.createSymbolicLink(atPath: dir.file("s/.lock"), withDestinationPath: dir.file("created-by-lock"))
        for arguments in [["import", Repository.sampleFormat2, "--merge", "--no-backfill"], ["export", "-o", dir.file("x.json.gz")], ["readiness"]] {
            let result = try CLI.run(arguments + ["--store", dir.file("s")])
            #expect(result.exitCode == 1 && result.stderr.contains(".lock") && result.stderr.contains("is a symbolic link"), "\(arguments): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("created-by-lock")))
        try FileManager.default.removeItem(atPath: dir.file("s/.lock"))
        try FileManager.default.createSymbolicLink(atPath: dir.file("s/pulse.sqlite-wal"), withDestinationPath: dir.file("wal-elsewhere"))
        let result = try CLI.run(["import", Repository.sampleFormat2, "--merge", "--no-backfill", "--store", dir.file("s")])
        #expect(result.exitCode == 1 && result.stderr.contains("pulse.sqlite-wal") && result.stderr.contains("is a symbolic link"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("wal-elsewhere")))
        #expect(StoreFixtures.bytes(dir.file("s/pulse.sqlite")) == database)
    }

    // MARK: - Read-only stores

    @Test("a store on read-only media is exported, verified and shown, and nothing is written into it",
          .enabled(if: Capability.enabled(ReadOnly.isAvailable)))
    func readOnlyStore() throws {
        try Capability.require(ReadOnly.isAvailable, "a read-only mount or an immutable directory (root: mount, or chattr +i)")
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 3)
        let before = try ReadOnly.listing(dir.file("s"))
        let database = StoreFixtures.bytes(dir.file("s/pulse.sqlite"))
        let export = try ReadOnly.run(["export", "--store", dir.file("s"), "-o", dir.file("ro.json.gz")], readOnly: dir.file("s"))
        #expect(export.exitCode == 0, "\(export.stderr)")
        let verify = try ReadOnly.run(["verify", dir.file("ro.json.gz"), "--store", dir.file("s")], readOnly: dir.file("s"))
        #expect(verify.exitCode == 0 && verify.stdout.contains("The store holds exactly what the archive holds"), "\(verify.stdout)\(verify.stderr)")
        let readiness = try ReadOnly.run(["readiness", "--store", dir.file("s"), "--days", "3", "--json"], readOnly: dir.file("s"))
        #expect(readiness.exitCode == 0 && (readiness.json["days"] as? [Any])?.count == 3, "\(readiness.stderr)")
        #expect(try ReadOnly.listing(dir.file("s")) == before)
        #expect(StoreFixtures.bytes(dir.file("s/pulse.sqlite")) == database)
        // The archive is the store's whole content.
        #expect(try StoreSnapshot(archive: dir.file("ro.json.gz")).sameContent(as: StoreSnapshot(store: dir.file("s"))))
    }

    @Test("a store of an earlier schema on read-only media says it must be upgraded first",
          .enabled(if: Capability.enabled(ReadOnly.isAvailable)))
    func readOnlyOldStore() throws {
        try Capability.require(ReadOnly.isAvailable, "a read-only mount or an immutable directory (root: mount, or chattr +i)")
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("demo"), days: 2)
        try StoreFixtures.schema5Store(copying: dir.file("demo"), into: dir.file("old"))
        let database = StoreFixtures.bytes(dir.file("old/pulse.sqlite"))
        let export = try ReadOnly.run(["export", "--store", dir.file("old"), "-o", dir.file("x.json.gz")], readOnly: dir.file("old"))
        #expect(export.exitCode == 1 && export.stderr.contains("must be upgraded first") && export.stderr.contains("cannot be"), "\(export.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.json.gz")))
        #expect(StoreFixtures.bytes(dir.file("old/pulse.sqlite")) == database)
    }

    @Test("a read-only snapshot taken mid-write: its WAL is read through its -shm, or the store is refused, never read without it",
          .enabled(if: Capability.enabled(ReadOnly.isAvailable)))
    func readOnlySnapshotWithWAL() throws {
        try Capability.require(ReadOnly.isAvailable, "a read-only mount or an immutable directory (root: mount, or chattr +i)")
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 2)
        // A writer that has not checkpointed: the new setting is only in pulse.sqlite-wal.
        let writer = try SQLiteDatabase(path: dir.file("s/pulse.sqlite"), create: false)
        try writer.execute("PRAGMA journal_mode = WAL")
        try writer.execute("PRAGMA wal_autocheckpoint = 0")
        try writer.execute(#"INSERT INTO "settings" ("key", "value") VALUES ('only.in.the.wal', '1')"#)
        for (snapshot, files) in [("with-shm", ["pulse.sqlite", "pulse.sqlite-wal", "pulse.sqlite-shm"]), ("without-shm", ["pulse.sqlite", "pulse.sqlite-wal"])] {
            try FileManager.default.createDirectory(atPath: dir.file(snapshot), withIntermediateDirectories: false)
            for file in files { try FileManager.default.copyItem(atPath: dir.file("s/" + file), toPath: dir.file(snapshot + "/" + file)) }
        }
        writer.close()
        let read = try ReadOnly.run(["export", "--store", dir.file("with-shm"), "-o", dir.file("a.json.gz")], readOnly: dir.file("with-shm"))
        #expect(read.exitCode == 0, "\(read.stderr)")
        #expect(try StoreSnapshot(archive: dir.file("a.json.gz")).settings["only.in.the.wal"] == "1")
        let refused = try ReadOnly.run(["export", "--store", dir.file("without-shm"), "-o", dir.file("b.json.gz")], readOnly: dir.file("without-shm"))
        #expect(refused.exitCode == 1 && refused.stderr.contains("pulse.sqlite-wal holds changes not yet in pulse.sqlite"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("b.json.gz")))
    }

    // MARK: - Terminal escapes

    @Test("key names, enum names and the app version from a file reach the terminal escaped; --json stays exact")
    func terminalEscapes() throws {
        let dir = TemporaryDirectory()
        let evil = #"\u001b]0;owned\u0007\u001b[2J\u0000\u009b"#
        var android = try String(contentsOfFile: Repository.sampleAndroid, encoding: .utf8)
        android = android.replacingOccurrences(of: #""ECG_QT_INTERVAL""#, with: "\"ECG\(evil)\"")
            .replacingOccurrences(of: #""appVersion": "2.3.1""#, with: "\"appVersion\": \"2.3.1\(evil)\"")
        android = "{\"top\(evil)\": 1," + android.drop { $0 != "{" }.dropFirst()
        dir.write("android.json", android)
        var ios = try BadArchives.validText()
        ios = ios.replacingOccurrences(of: #""unit":"#, with: "\"field\(evil)\":1,\"unit\":")
        dir.write("ios.json", ios)
        let raw: Set<UInt8> = [0x1B, 0x07, 0x00]
        func isClean(_ text: String) -> Bool { !text.utf8.contains { raw.contains($0) } && !text.unicodeScalars.contains("\u{9B}") }
        for arguments in [["inspect", dir.file("android.json")], ["inspect", dir.file("ios.json")],
                          ["verify", dir.file("android.json")], ["verify", dir.file("ios.json")],
                          ["import", dir.file("android.json"), "--store", dir.file("s"), "--no-backfill"]] {
            let result = try CLI.run(arguments)
            #expect(result.exitCode == 0 || arguments[0] == "verify", "\(arguments): \(result.stderr)")
            #expect(isClean(result.stdout) && isClean(result.stderr), "\(arguments): \(result.stdout.debugDescription) \(result.stderr.debugDescription)")
            #expect((result.stdout + result.stderr).contains(#"\u{1B}]0;owned\u{07}"#), "\(arguments): \(result.stdout)\(result.stderr)")
        }
        let json = try CLI.run(["inspect", dir.file("android.json"), "--json"])
        #expect(isClean(json.stdout))
        #expect(json.json["appVersion"] as? String == "2.3.1\u{1B}]0;owned\u{07}\u{1B}[2J\u{0}\u{9B}")
        let warnings = try #require(json.json["warnings"] as? [String])
        #expect(warnings.contains { $0.contains(#"ECG\u{1B}]0;owned"#) }, "\(warnings)")
        // A newline in a path or an argument keeps the Error line one line.
        for arguments in [["inspect", dir.file("no\nsuch.gz")], ["export", "--store", dir.file("no\nstore")], ["inspect", "--no\nsuch-option"]] {
            let failed = try CLI.run(arguments)
            let line = try #require(failed.stderr.split(separator: "\n").first)
            #expect(failed.exitCode != 0 && line.hasPrefix("Error: ") && line.contains(#"no\u{A}s"#), "\(arguments): \(failed.stderr.debugDescription)")
        }
    }

    // MARK: - File-size limit

    @Test("under ulimit -f, without ignoring SIGXFSZ itself: exit 1, File too large, no partial file, no half-made store",
          .disabled(if: builtWithSanitizer, "under ulimit -f the sanitizer's runtime dies of SIGBUS before our code runs"))
    func fileSizeLimit() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 20)
        _ = try StoreFixtures.export(dir.file("s"), to: dir.file("s.json.gz"))
        func limited(_ arguments: [String]) throws -> CLI.Result {
            try Shell.run("ulimit -f 64; exec " + ([CLI.executable] + arguments).map { "'\($0)'" }.joined(separator: " "))
        }
        let export = try limited(["export", "--store", dir.file("s"), "-o", dir.file("full.json.gz")])
        #expect(export.exitCode == 1 && export.stderr.contains("File too large"), "\(export.exitCode) \(export.stderr)")
        // Named by the archive it was to be, not by the partial file, which is gone by then.
        #expect(export.stderr.contains("cannot write \(dir.file("full.json.gz")): File too large") && !export.stderr.contains(".partial-"),
                "\(export.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("full.json.gz")))
        let imported = try limited(["import", dir.file("s.json.gz"), "--store", dir.file("new"), "--no-backfill"])
        #expect(imported.exitCode == 1 && imported.stderr.hasPrefix("Error: "), "\(imported.exitCode) \(imported.stderr)")
        // SQLite says only "disk I/O error": the limit is named beside it.
        #expect(!imported.stderr.contains("disk I/O error") || imported.stderr.contains("bytes: the file-size limit, ulimit -f, may be what stopped it"),
                "\(imported.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("new")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).allSatisfy { !$0.contains(".partial-") })
    }

    // MARK: - Empty paths

    @Test("an empty path is a usage error (exit 64), whatever names it; nothing is created")
    func emptyPaths() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 2)
        let commands: [[String]] = [
            ["export", "--store", ""], ["export", "--store", dir.file("s"), "-o", ""], ["readiness", "--store", ""],
            ["readiness", "--store", dir.file("s"), "--svg", ""], ["import", Repository.sampleFormat2, "--store", ""],
            ["import", "", "--store", dir.file("new")], ["demo", "--store", ""], ["inspect", ""], ["verify", ""],
            ["verify", Repository.sampleFormat2, "--store", ""],
        ]
        for arguments in commands {
            let result = try CLI.run(arguments, in: dir.path)
            #expect(result.exitCode == 64 && result.stderr.contains("is empty"), "\(arguments): \(result.stderr)")
        }
        let unset = try CLI.run(["export"], environment: ["PULSE_STORE": ""], in: dir.path)
        #expect(unset.exitCode == 64 && unset.stderr.contains("PULSE_STORE is set but empty"), "\(unset.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["s"])
    }

    // MARK: - Small ones

    @Test("a target whose name has the longest a file system allows (255 bytes, in one- and two-byte characters) is written: its temporary name is cut short, never the target's")
    func longestNames() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s")
        try StoreFixtures.demoStore(store, days: 2)
        for stem in [String(repeating: "a", count: 252), String(repeating: "é", count: 126)] {
            let archive = dir.file(stem + ".gz")
            let exported = try CLI.run(["export", "--store", store, "-o", archive, "--quiet"])
            #expect(exported.exitCode == 0, "\(stem.utf8.count + 3) bytes: \(exported.stderr)")
            #expect(try CLI.run(["verify", archive, "--quiet"]).exitCode == 0)
            let folder = dir.file(String(stem.dropLast(2)) + "-t")
            let tables = try CLI.run(["tables", archive, "-o", folder])
            #expect(tables.exitCode == 0, "\(tables.stderr)")
            #expect(FileManager.default.fileExists(atPath: folder + "/measurements.csv"))
        }
        // One byte more is refused before any work: no temporary entry is made for it.
        let tooLong = try CLI.run(["export", "--store", store, "-o", dir.file(String(repeating: "a", count: 253) + ".gz")])
        #expect(tooLong.exitCode == 1 && tooLong.stderr.contains("File name too long"), "\(tooLong.stderr)")
        let stopped = try KillPoints.stop(["export", "--store", store, "-o", dir.file(String(repeating: "b", count: 253) + ".gz")], at: "write:1", with: SIGKILL)
        #expect(!stopped.reached && stopped.status == 1, "the export wrote before the refusal: \(stopped.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") }
        #expect(left.isEmpty, "temporary entries left: \(left)")
    }

    @Test("a failed import into a new store under missing folders removes the folders it made, and never one that holds something else")
    func failedImportRemovesTheFoldersItMade() throws {
        let dir = TemporaryDirectory()
        let broken = dir.file("broken.json")
        try Data(#"{"formatVersion": 2, "measurements": [{"id": "#.utf8).write(to: URL(fileURLWithPath: broken))
        let failed = try CLI.run(["import", broken, "--store", dir.file("x/y/z/store")])
        #expect(failed.exitCode == 1 && failed.stderr.hasPrefix("Error: "), "\(failed.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(left == ["broken.json"], "left: \(left)")
        // A folder that gained another entry meanwhile (here: before) stays, with that entry.
        try FileManager.default.createDirectory(atPath: dir.file("x/y/other"), withIntermediateDirectories: true)
        let beside = try CLI.run(["import", broken, "--store", dir.file("x/y/z/store")])
        #expect(beside.exitCode == 1, "\(beside.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("x/y")) == ["other"])
        // A successful one keeps them.
        let imported = try CLI.run(["import", Repository.sampleFormat2, "--store", dir.file("p/q/store"), "--no-backfill"])
        #expect(imported.exitCode == 0, "\(imported.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.file("p/q/store/pulse.sqlite")))
    }

    @Test("a command refused while another holds the store says what is running")
    func busyMessages() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 2)
        _ = try StoreFixtures.export(dir.file("s"), to: dir.file("a.json.gz"))
        do {
            let writer = try StoreLock(directory: dir.file("s"), activity: "an import")
            for arguments in [["readiness"], ["verify", dir.file("a.json.gz")], ["export", "-o", dir.file("x.json.gz")], ["readiness", "--backfill"]] {
                let result = try CLI.run(arguments + ["--store", dir.file("s")])
                #expect(result.exitCode == 1 && result.stderr.contains("is busy: an import (pid \(getpid())) is changing it"), "\(arguments): \(result.stderr)")
            }
            withExtendedLifetime(writer) {}
        }
        do {
            let reader = try StoreLock(directory: dir.file("s"), shared: true)
            let export = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("y.json.gz")])
            #expect(export.exitCode == 0, "readers run side by side: \(export.stderr)")
            let imported = try CLI.run(["import", dir.file("a.json.gz"), "--store", dir.file("s"), "--merge"])
            #expect(imported.exitCode == 1 && imported.stderr.contains("is busy: another command (an export, a verification against the store or a readiness history) is reading it"), "\(imported.stderr)")
            withExtendedLifetime(reader) {}
        }
        // Another program's exclusive lock over an ended command's record: the record is not
        // named as the holder (it was: "an import (pid N) is changing it", N long gone).
        let record = try CLI.shell("sh -c 'echo \"an import (pid $$)\"' > '\(dir.file("s/.lock"))'")
        #expect(record.exitCode == 0)
        let held = try CLI.shell("flock -x '\(dir.file("s/.lock"))' \"$PA\" readiness --store '\(dir.file("s"))'")
        #expect(held.exitCode == 1 && held.stderr.contains("another process holds its lock (the lock file names an import (pid")
                && held.stderr.contains("which has ended)"), "\(held.stderr)")
    }

    @Test("a busy store's lock is closed once: a failed attempt never closes another thread's file")
    func busyLockClosesOnce() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("s"), withIntermediateDirectories: false)
        let holder = try StoreLock(directory: dir.file("s"))
        final class Watch: @unchecked Sendable {
            let lock = NSLock()
            var stop = false
            var lost = 0
        }
        let watch = Watch()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            var lost = 0
            while true {
                watch.lock.lock()
                let stop = watch.stop
                watch.lock.unlock()
                if stop { break }
                let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
                for _ in 0..<20 where fcntl(fd, F_GETFD) == -1 {
                    lost += 1
                    break
                }
                if fcntl(fd, F_GETFD) != -1 { close(fd) }
            }
            watch.lock.lock()
            watch.lost = lost
            watch.lock.unlock()
            done.signal()
        }
        thread.start()
        for _ in 0..<10_000 {
            #expect(throws: StoreError.self) { _ = try StoreLock(directory: dir.file("s")) }
        }
        watch.lock.lock()
        watch.stop = true
        watch.lock.unlock()
        done.wait()
        #expect(watch.lost == 0, "a failed lock closed \(watch.lost) descriptors it did not own")
        withExtendedLifetime(holder) {}
    }

    @Test("an invalid TZ is refused like an invalid --timezone; ':Area/City' is read as the C library reads it")
    func invalidTZ() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 2)
        for arguments in [["readiness", "--store", dir.file("s")], ["import", Repository.sampleFormat2, "--store", dir.file("new")],
                          ["export", "--store", dir.file("s")]] {
            let result = try CLI.run(arguments, environment: ["TZ": "Mars/Olympus_Mons"], in: dir.path)
            #expect(result.exitCode == 64 && result.stderr.contains("'Mars/Olympus_Mons' of the TZ environment variable"), "\(arguments): \(result.stderr)")
            let option = try CLI.run(arguments + ["--timezone", "Mars/Olympus_Mons"], in: dir.path)
            #expect(option.exitCode == 64 || arguments[0] == "export", "\(option.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("new")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["s"])
        let colon = try CLI.run(["readiness", "--store", dir.file("s"), "--days", "1"], environment: ["TZ": ":Europe/Berlin"])
        #expect(colon.exitCode == 0 && colon.stdout.contains("(Europe/Berlin)"), "\(colon.stdout)\(colon.stderr)")
        // A link to a zone file, as systemd and containers set TZ, names the zone it points to;
        // UTC0 is UTC.
        let link = dir.file("localtime")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/usr/share/zoneinfo/Asia/Tokyo")
        let linked = try CLI.run(["readiness", "--store", dir.file("s"), "--days", "1"], environment: ["TZ": ":" + link])
        #expect(linked.exitCode == 0 && linked.stdout.contains("(Asia/Tokyo)"), "\(linked.stdout)\(linked.stderr)")
        // Named as given: Foundation calls UTC "GMT".
        for tz in ["UTC0", "UTC", ""] {
            let posix = try CLI.run(["readiness", "--store", dir.file("s"), "--days", "1"], environment: ["TZ": tz])
            #expect(posix.exitCode == 0 && posix.stdout.contains("(\(tz.isEmpty ? "UTC" : tz))"), "\(tz): \(posix.stdout)\(posix.stderr)")
        }
    }

    @Test("a POSIX fixed offset in TZ (GMT+5, UTC-3:30, EST5) is hours west of Greenwich, as the C library reads it; past the zones' offsets, or with minutes past 59, it is refused")
    func posixOffsetsInTZ() throws {
        let dir = TemporaryDirectory()
        let plain = try CLI.shell("gzip -dc < '\(Repository.sampleFormat2)'", expectingSuccess: true).stdout
        try FileManager.default.createDirectory(atPath: dir.file("b"), withIntermediateDirectories: true)
        let backup = dir.write("b/pulseloop-backup-2021-03-14-0300.json", plain)
        // A file time no zone's clock could show as the name's minute: the name alone dates it.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 946_684_800)], ofItemAtPath: backup)
        for (tz, instant) in [("GMT+5", "2021-03-14T08:00:00.000Z"), ("UTC-3:30", "2021-03-13T23:30:00.000Z"),
                              ("EST5", "2021-03-14T08:00:00.000Z"), ("GMT+0", "2021-03-14T03:00:00.000Z")] {
            let libc = try CLI.shell("date -u -d @$(TZ='\(tz)' date -d '2021-03-14 03:00' +%s) +%Y-%m-%dT%H:%M:%S.000Z", expectingSuccess: true).stdout
            #expect(libc == instant + "\n", "the C library reads \(tz) otherwise: \(libc)")
            let result = try CLI.run(["prune", dir.file("b"), "--keep-last", "1", "--json"], environment: ["TZ": tz])
            let kept = (result.json["kept"] as? [[String: Any]])?.first
            #expect(result.exitCode == 0 && kept?["madeAt"] as? String == instant && kept?["madeAtFrom"] as? String == "name",
                    "\(tz): \(result.stdout)\(result.stderr)")
        }
        // Past the offsets zones have (UTC−12 to UTC+14), refused: Foundation's date formatting
        // trapped on UTC+15 and UTC−18 in export's default name. export and prune take no
        // --timezone, so the message does not offer one.
        for tz in ["GMT+13", "GMT-15", "GMT+18", "GMT+19"] {
            for arguments in [["prune", dir.file("b"), "--keep-last", "1"], ["export", "--store", dir.file("none"), "-o", dir.file("b") + "/"]] {
                let far = try CLI.run(arguments, environment: ["TZ": tz])
                #expect(far.exitCode == 64 && far.stderr.contains("'\(tz)' of the TZ environment variable is an offset no zone has")
                        && !far.stderr.contains("--timezone"), "\(tz) \(arguments[0]): \(far.stderr)")
            }
        }
        // At the edges, export names its file by the minute `date` shows.
        try StoreFixtures.demoStore(dir.file("s"), days: 1)
        for tz in ["GMT-14", "GMT+12"] {
            let minute = "date +pulseloop-backup-%Y-%m-%d-%H%M.json.gz"
            let result = try CLI.shell("export TZ='\(tz)'; mkdir '\(tz)'; \(minute); \"$PA\" export --store s -o \(tz)/ --quiet | xargs basename; \(minute)",
                                       in: dir.path, expectingSuccess: false)
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 3 && (lines[1] == lines[0] || lines[1] == lines[2]), "\(tz): \(result.stdout)\(result.stderr)")
        }
        let readiness = try CLI.run(["readiness", "--store", dir.file("none")], environment: ["TZ": "GMT+13"])
        #expect(readiness.exitCode == 64 && readiness.stderr.contains("or pass --timezone"), "\(readiness.stderr)")
        // Shaped like an offset, its minutes or seconds past 59: the C library clamps them,
        // Foundation read GMT+05:60 as six hours east. Refused, whichever way.
        for tz in ["GMT+05:60", "UTC-3:99", "GMT+1:60", "GMT+5:00:60"] {
            let odd = try CLI.run(["readiness", "--store", dir.file("none")], environment: ["TZ": tz])
            #expect(odd.exitCode == 64 && odd.stderr.contains("'\(tz)' of the TZ environment variable is not a zone identifier"), "\(tz): \(odd.stderr)")
        }
    }

    @Test("readiness --as-of 0000-01-01 prints the years of archive dates: 0000, then -0001")
    func yearZero() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 2)
        let result = try CLI.run(["readiness", "--store", dir.file("s"), "--as-of", "0000-01-01", "--days", "2", "--json"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let days = try #require(result.json["days"] as? [[String: Any]])
        #expect(days.map { $0["date"] as? String } == ["0000-01-01", "-0001-12-31"])
    }

    @Test("a store under a linked directory opens for every command: only links inside the store are refused")
    func storeUnderLinkedDirectory() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("real"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir.file("alias"), withDestinationPath: dir.file("real"))
        let store = dir.file("alias/store")
        let imported = try CLI.run(["import", Repository.sampleFormat2, "--store", store, "--no-backfill"])
        #expect(imported.exitCode == 0, "\(imported.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.file("real/store/pulse.sqlite")))
        try FileManager.default.createSymbolicLink(atPath: dir.file("storelink"), withDestinationPath: dir.file("real/store"))
        let exported = try CLI.run(["export", "--store", dir.file("storelink"), "-o", dir.file("e.json.gz")])
        #expect(exported.exitCode == 0, "\(exported.stderr)")
        let verified = try CLI.run(["verify", dir.file("e.json.gz"), "--store", store])
        #expect(verified.exitCode == 0, "\(verified.stdout)\(verified.stderr)")
        let shown = try CLI.run(["readiness", "--store", store])
        #expect(shown.exitCode == 0, "\(shown.stderr)")
        let replaced = try CLI.run(["import", dir.file("e.json.gz"), "--store", store, "--replace", "--no-backfill"])
        #expect(replaced.exitCode == 0, "\(replaced.stderr)")
    }

    @Test("a backups link in the store is refused: the safety backup is never written where it points")
    func backupsLink() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 2)
        try FileManager.default.createDirectory(atPath: dir.file("victim"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir.file("s/backups"), withDestinationPath: dir.file("victim"))
        let database = StoreFixtures.bytes(dir.file("s/pulse.sqlite"))
        let result = try CLI.run(["import", Repository.sampleFormat2, "--store", dir.file("s"), "--replace", "--no-backfill"])
        #expect(result.exitCode == 1 && result.stderr.contains("backups") && result.stderr.contains("is a symbolic link"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("victim")).isEmpty)
        #expect(StoreFixtures.bytes(dir.file("s/pulse.sqlite")) == database)
    }

    @Test("a safety backup that fails on a limit the store's values pass says which option raises it, as the import's own read does")
    func safetyBackupPastALimit() throws {
        let dir = TemporaryDirectory()
        // A store holding a 3 MiB settings value (imported with the limit raised).
        let plain = dir.file("big.json")
        #expect(try CLI.shell("gzip -dc '\(Repository.sampleFormat2)' > '\(plain)'").exitCode == 0)
        var content = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: plain))) as? [String: Any])
        var settings = content["settings"] as? [String: Any] ?? [:]
        settings["test.large"] = "\"" + String(repeating: "x", count: 3 << 20) + "\""
        content["settings"] = settings
        try JSONSerialization.data(withJSONObject: content).write(to: URL(fileURLWithPath: plain))
        let made = try CLI.run(["import", plain, "--store", dir.file("s"), "--no-backfill", "--max-object-size", String(8 << 20)])
        try #require(made.exitCode == 0, "\(made.stderr)")
        let result = try CLI.run(["import", Repository.sampleFormat2, "--store", dir.file("s"), "--replace", "--no-backfill"])
        #expect(result.exitCode == 1 && result.stderr.contains("the safety backup of the store") && result.stderr.contains("--max-object-size raises the limit"), "\(result.stderr)")
        let raised = try CLI.run(["import", Repository.sampleFormat2, "--store", dir.file("s"), "--replace", "--no-backfill", "--max-object-size", String(8 << 20)])
        #expect(raised.exitCode == 0, "\(raised.stderr)")
    }

    @Test("a failed safety backup says it was the safety backup, and the store is unchanged")
    func failedSafetyBackup() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 2)
        dir.write("s/backups", "a file where the backups folder would go")
        let database = StoreFixtures.bytes(dir.file("s/pulse.sqlite"))
        let result = try CLI.run(["import", Repository.sampleFormat2, "--store", dir.file("s"), "--replace", "--no-backfill"])
        #expect(result.exitCode == 1 && result.stderr.contains("the safety backup of the store") && result.stderr.contains("the store is unchanged"), "\(result.stderr)")
        #expect(StoreFixtures.bytes(dir.file("s/pulse.sqlite")) == database)
    }
}

/// Runs a shell command line with the test environment of `CLI`.
enum Shell {
    static func run(_ command: String) throws -> CLI.Result {
        let process = CLI.process(["-c", command])
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        return try CLI.collect(process)
    }
}

/// A store directory made read-only for one run of the binary. Tests run as root, which
/// permission bits do not stop: a read-only bind mount in a mount namespace of its own
/// (`unshare -m`, as a read-only snapshot), else the immutable attribute (`chattr +i`) on the
/// directory and its files.
enum ReadOnly {
    static let canMount: Bool = {
        let dir = TemporaryDirectory()
        return (try? Shell.run("exec unshare -m sh -c 'mount --bind -o ro \"$0\" \"$0\" && ! touch \"$0/x\" 2>/dev/null' '\(dir.path)'"))?.exitCode == 0
    }()

    static let isAvailable = canMount || LimitsTests.canMakeImmutable()

    static func run(_ arguments: [String], readOnly directory: String) throws -> CLI.Result {
        let command = ([CLI.executable] + arguments).map { "'\($0)'" }.joined(separator: " ")
        if canMount {
            return try Shell.run("exec unshare -m sh -c 'mount --bind -o ro \"$0\" \"$0\" && exec \"$@\"' '\(directory)' \(command)")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).map { directory + "/" + $0 } + [directory]
        for file in files { _ = LimitsTests.chattr("+i", file) }
        defer { for file in files { _ = LimitsTests.chattr("-i", file) } }
        return try Shell.run("exec " + command)
    }

    /// Names, sizes and modification times of a directory's entries.
    static func listing(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted().map { name in
            let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/" + name)
            return "\(name) \(attributes[.size] ?? "") \(attributes[.modificationDate] ?? "")"
        }
    }
}
