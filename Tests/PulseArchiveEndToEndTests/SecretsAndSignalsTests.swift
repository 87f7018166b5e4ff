import Foundation
import Testing
import PulseSQLite
@testable import PulseSystem
@testable import PulseAge
@testable import PulseArchive
@testable import PulseArchiveCLI
@testable import PulseStore
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// Issue 24: no secret or plaintext outlives a command (core dumps off once a secret is read,
/// decrypted staging in files without a name, a dead run's temporary directory removed by the
/// next run), and every signal that ends a command ends it cleanly (SIGQUIT as SIGINT, the
/// terminal's echo back after a signal at a passphrase prompt).
@Suite("Secrets, plaintext at rest, signals and the terminal")
struct SecretsAndSignalsTests {
    /// In a setting's key and value and in a document of the fixture's store: found in a file,
    /// it is decrypted data left behind.
    static let marker = "PLAINTEXT-MARKER-7f3a9c41"
    static let passphrase = "correct horse battery staple"

    /// A store holding the marker, an identity, and its exports: encrypted with a passphrase,
    /// to the identity, and plain.
    struct Fixture {
        let dir = TemporaryDirectory()
        var store: String { dir.file("store") }
        var passphraseFile: String { dir.file("passphrase") }
        var identityFile: String { dir.file("key.txt") }
        var sealed: String { dir.file("sealed.json.gz.age") }
        var toIdentity: String { dir.file("to-key.json.gz.age") }
        var plain: String { dir.file("plain.json.gz") }

        init(days: Int = 45, rawPacketsPerDay: Int = 300) throws {
            try StoreFixtures.demoStore(store, days: days, seed: 9, rawPacketsPerDay: rawPacketsPerDay)
            let database = try SQLiteDatabase(path: store + "/pulse.sqlite", create: false)
            try database.execute(#"INSERT INTO "settings" ("key", "value") VALUES ('\#(marker)-key', '{"note":"\#(marker)-value"}')"#)
            database.close()
            try FileManager.default.createDirectory(atPath: store + "/Splits", withIntermediateDirectories: true)
            dir.write("store/Splits/01J0000000000000000000000A.json", #"{"schemaVersion":3,"note":"\#(marker)"}"#)
            dir.write("passphrase", Self.passphraseLine)
            #expect(chmod(passphraseFile, 0o600) == 0)
            let recipient = try CLI.run(["keygen", "-o", identityFile])
            #expect(recipient.exitCode == 0, "\(recipient.stderr)")
            for arguments in [["-o", sealed, "--passphrase-file", passphraseFile],
                              ["-o", toIdentity, "-r", recipient.stdout.trimmingCharacters(in: .whitespacesAndNewlines)],
                              ["-o", plain]] {
                let export = try CLI.run(["export", "--store", store] + arguments)
                #expect(export.exitCode == 0, "\(export.stderr)")
            }
        }

        static let passphraseLine = SecretsAndSignalsTests.passphrase + "\n"
    }

    /// Every entry under `directory`, recursively, as paths relative to it.
    static func entries(_ directory: String) -> [String] {
        (FileManager.default.enumerator(atPath: directory)?.allObjects as? [String]) ?? []
    }

    /// The entries under `directory` whose bytes hold the marker.
    static func holdingMarker(_ directory: String) -> [String] {
        entries(directory).filter { name in
            guard let data = FileManager.default.contents(atPath: directory + "/" + name) else { return false }
            return data.range(of: Data(marker.utf8)) != nil
        }
    }

    /// The pid of a process that has ended (and was reaped): no process has it now, short of
    /// the system handing it out again meanwhile.
    static func deadProcessID() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    @Test("verify, inspect and diff of an encrypted archive, and export -o - with a key, killed with SIGKILL part way with $TMPDIR a test directory, leave no entry there and no decrypted byte; the next run removes a dead run's temporary directory and nothing else")
    func killedReadersLeaveNothingDecrypted() throws {
        let f = try Fixture()
        let scratch = f.dir.file("tmp")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        // SQLite's own temporary files (the unnamed databases, its sorts) land there too.
        let environment = ["TMPDIR": scratch, "SQLITE_TMPDIR": scratch]
        let key = ["--passphrase-file", f.passphraseFile]
        let commands = [["verify", f.sealed] + key, ["inspect", f.sealed] + key, ["diff", f.sealed, f.toIdentity, "-i", f.identityFile] + key]
        /// Kills `command` with SIGKILL at `count` of its `point`s; nothing may be left in $TMPDIR.
        func killedLeaveNothing(_ command: [String], at point: String, _ count: Int) throws {
            let total = try #require(try KillPoints.count(command, environment: environment)[point])
            #expect(Self.entries(scratch).isEmpty, "\(command[0]) left \(Self.entries(scratch)) after a normal run")
            for stop in KillPoints.spread(point, count, over: total) {
                try KillPoints.expectStopped(command, at: stop, with: SIGKILL, environment: environment)
                let left = Self.entries(scratch)
                #expect(left.isEmpty, "\(command.joined(separator: " ")) killed at \(stop) left \(left) in $TMPDIR")
                #expect(Self.holdingMarker(scratch).isEmpty, "\(command[0]) killed at \(stop) left decrypted data in \(Self.holdingMarker(scratch))")
                for name in left { try? FileManager.default.removeItem(atPath: scratch + "/" + name) }
            }
        }
        for command in commands { try killedLeaveNothing(command, at: "read", 3) }

        // `export -o -` with a key stages the archive before encryption: in a file without a
        // name, so a SIGKILL at any write leaves nothing (it was a named file in a directory
        // of $TMPDIR, the archive in clear, until the next run swept it).
        let recipient = try CLI.run(["keygen", "-y", f.identityFile]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        for keys in [["-r", recipient], ["--passphrase-file", f.passphraseFile]] {
            let command = ["export", "--store", f.store, "-o", "-"] + keys
            try killedLeaveNothing(command, at: "write", 4)
            // And what that file holds is the archive encrypted: no byte of it in clear reaches
            // a disk (it was the gzip archive, unnamed but in clear, until it was sent sealed).
            let writes = try #require(try KillPoints.count(command, environment: environment)["write"])
            try Self.whilePaused(command, at: "write:\(writes / 2)", environment: environment) { pid in
                let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
                let staged = descriptors.filter { ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")) ?? "").hasPrefix(scratch + "/") }
                #expect(staged.count == 1, "\(keys[0]): \(staged)")
                for descriptor in staged {
                    let head = FileManager.default.contents(atPath: "/proc/\(pid)/fd/\(descriptor)")?.prefix(21) ?? Data()
                    #expect(head == Data("age-encryption.org/v1".utf8), "\(keys[0]): the staged archive starts \(Array(head.prefix(4)))")
                }
            }
        }

        // A temporary directory of a run that was killed (its pid in its name, the process gone)
        // is removed by the next run; one of a live process, or without a pid, stays.
        let stale = scratch + "/pulse-archive-verify-\(try Self.deadProcessID())-Ab12Cd"
        let live = scratch + "/pulse-archive-verify-\(getpid())-Ef34Gh"
        let unknown = scratch + "/pulse-archive-verify-Ij56Kl"
        for directory in [stale, live, unknown] {
            try FileManager.default.createDirectory(atPath: directory + "/store", withIntermediateDirectories: true)
            f.dir.write(String(directory.dropFirst(f.dir.path.count + 1)) + "/store/store.sqlite", Self.marker)
        }
        let staleFile = scratch + "/pulse-archive-\(try Self.deadProcessID())-Mn78Op"
        f.dir.write(String(staleFile.dropFirst(f.dir.path.count + 1)), "")
        for command in commands.prefix(2) {
            let result = try CLI.run(command + ["--quiet"], environment: environment)
            #expect(result.exitCode == 0, "\(command[0]): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: stale), "a dead run's temporary directory was not removed")
        #expect(!FileManager.default.fileExists(atPath: staleFile), "a dead run's scratch file was not removed")
        #expect(FileManager.default.fileExists(atPath: live), "a live process's temporary directory was removed")
        #expect(FileManager.default.fileExists(atPath: unknown), "a directory without a pid in its name was removed")
    }

    @Test("SQLite's temporary files (inspect's unnamed database past its cache) never have a name in $TMPDIR: paused as each is opened, the file inspect holds there shows none, so no SIGKILL can land between a create and its unlink")
    func sqliteTemporaryFilesHaveNoName() throws {
        #if os(Linux)
        let f = try Fixture()
        let scratch = f.dir.file("tmp")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let environment = ["TMPDIR": scratch, "SQLITE_TMPDIR": scratch]
        let command = ["inspect", f.sealed, "--passphrase-file", f.passphraseFile]
        let opened = try #require(try KillPoints.count(command, environment: environment)["sqlite.temporary.opened"])
        for occurrence in 1...opened {
            try Self.whilePaused(command, at: "sqlite.temporary.opened:\(occurrence)", environment: environment) { pid in
                let targets = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").compactMap {
                    try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")
                }.filter { $0.hasPrefix(scratch + "/") }
                // An O_TMPFILE file shows as `#<inode> (deleted)`; a file created with a name
                // and unlinked after shows that name (SQLite's `etilqs_…`).
                let named = targets.filter { !$0.dropFirst(scratch.count + 1).hasPrefix("#") }
                #expect(named.isEmpty, "inspect paused at its temporary file \(occurrence) holds files that were created with a name: \(named)")
                // The reader's look-ahead file, and the one SQLite just opened.
                #expect(targets.count >= 2, "inspect paused at its temporary file \(occurrence) holds \(targets) in $TMPDIR")
            }
        }
        #expect(Self.entries(scratch).isEmpty, "inspect left \(Self.entries(scratch)) in $TMPDIR")
        #endif
    }

    @Test("an import of an encrypted archive killed with SIGKILL while staging leaves its decrypted staging beside the store; the next command that opens the store, a reader (export) or a writer (readiness --backfill), removes it")
    func killedImportsStagingIsRemovedByTheNextCommand() throws {
        let f = try Fixture(days: 30, rawPacketsPerDay: 100)
        let command = ["import", f.sealed, "--passphrase-file", f.passphraseFile, "--no-backfill"]
        for (index, next) in [["export", "-o", f.dir.file("again.json.gz")], ["readiness", "--backfill"]].enumerated() {
            let store = f.dir.file("new\(index)")
            let reads = try #require(try KillPoints.count(command + ["--store", f.dir.file("count\(index)")])["read"])
            try KillPoints.expectStopped(command + ["--store", store], at: "read:\(max(1, reads - 1))", with: SIGKILL)
            let staging = Self.entries(store).filter { $0.hasPrefix(".staging-") && !$0.contains("/") }
            #expect(staging.count == 1, "the killed import left \(Self.entries(store))")
            #expect(!Self.holdingMarker(store).isEmpty, "the staging holds no decrypted row: the test kills too early")
            let result = try CLI.run([next[0], "--store", store] + next.dropFirst())
            #expect(result.exitCode == 0, "\(next[0]): \(result.stderr)")
            #expect(Self.entries(store).filter { $0.hasPrefix(".staging-") }.isEmpty, "\(next[0]) left \(Self.entries(store))")
            #expect(Self.holdingMarker(store).isEmpty, "\(next[0]) left decrypted data in \(Self.holdingMarker(store))")
        }
    }

    /// Runs `arguments` until it stops at `pause`, calls `body` with its pid while it is
    /// stopped, then kills it. The process starts through `/bin/sh` with the soft core-file
    /// limit raised to the hard one, so that the limit the command runs with is its own doing,
    /// and without CAP_SYS_PTRACE (`withoutPtrace`).
    static func whilePaused(_ arguments: [String], at pause: String, environment: [String: String] = [:],
                            _ body: (Int32) throws -> Void) throws {
        let process = CLI.process(arguments, environment: environment.merging([KillPoints.variable: pause]) { $1 })
        let command = try withoutPtrace() + ["/bin/sh", "-c", "ulimit -S -c \"$(ulimit -H -c)\"; exec \"$0\" \"$@\"", CLI.executable] + arguments
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let marker = Data("test pause point: paused at \(pause)\n".utf8)
        var collected = Data()
        let descriptor = err.fileHandleForReading.fileDescriptor
        var buffer = [UInt8](repeating: 0, count: 4096)
        while collected.range(of: marker) == nil {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            try #require(count > 0, "\(arguments[0]) ended without reaching \(pause): \(String(decoding: collected, as: UTF8.self))")
            collected += buffer[..<count]
        }
        try #require(KillPoints.isStopped(process.processIdentifier), "\(arguments[0]) did not stop at \(pause)")
        try body(process.processIdentifier)
    }

    /// The soft core-file limit of a process, as /proc says ("0", "unlimited", …).
    static func coreLimit(_ pid: Int32) throws -> String {
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let line = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") })
        return String(try #require(line.dropFirst("Max core file size".count).split(separator: " ").first))
    }

    /// The command that runs what follows it without CAP_SYS_PTRACE: nothing when this test
    /// process lacks it (a user), `setpriv --bounding-set=-sys_ptrace` when it has it (root in a
    /// container). Both sides of `memoryOpenable` need it dropped: a process may open another's
    /// memory only if its capabilities include the other's, and then exactly when the other is
    /// dumpable.
    static func withoutPtrace() throws -> [String] {
        guard mayTrace else { return [] }
        let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first { FileManager.default.isExecutableFile(atPath: $0) }
        try Capability.require(setpriv != nil, "setpriv (util-linux), to run without CAP_SYS_PTRACE")
        return [setpriv!, "--bounding-set=-sys_ptrace"]
    }

    /// Whether a process of the same user, without CAP_SYS_PTRACE, may open the process's
    /// memory (/proc/PID/mem): exactly when the process is dumpable.
    static func memoryOpenable(_ pid: Int32) throws -> Bool {
        let command = try withoutPtrace() + ["/bin/sh", "-c", "exec 3< /proc/\(pid)/mem"]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    @Test("core dumps are off (core-file limit 0, not dumpable) once a secret is read: an identity file, a passphrase file, the variable; a command without a secret is left as it was")
    func coreDumpsOffOnceASecretIsRead() throws {
        #if os(Linux)
        let f = try Fixture(days: 5, rawPacketsPerDay: 4)
        let withSecrets: [(String, [String], [String: String])] = [
            ("an identity file", ["inspect", f.toIdentity, "-i", f.identityFile], [:]),
            ("a passphrase file", ["inspect", f.sealed, "--passphrase-file", f.passphraseFile], [:]),
            ("the variable", ["inspect", f.sealed], ["PULSE_ARCHIVE_PASSPHRASE": Self.passphrase]),
        ]
        // The control: the same probes on a command that reads no secret see a dumpable
        // process with the limit it was given, so they can tell the two apart.
        try Self.whilePaused(["inspect", f.plain], at: "read:1") { (pid: Int32) throws in
            #expect(try Self.coreLimit(pid) != "0", "the control runs with a core-file limit of 0: raise the hard limit")
            #expect(try Self.memoryOpenable(pid), "the control is not dumpable, or the probe cannot open a dumpable process's memory")
        }
        for (source, arguments, environment) in withSecrets {
            try Self.whilePaused(arguments, at: "read:1", environment: environment) { (pid: Int32) throws in
                let limit = try Self.coreLimit(pid)
                #expect(limit == "0", "with \(source), the core-file limit is \(limit)")
                #expect(try !Self.memoryOpenable(pid), "with \(source), the process is dumpable")
            }
        }
        #endif
    }

    @Test("SIGQUIT (Ctrl-\\) during import --replace, staged or reading, ends it by the signal, says so, leaves no core file, and the store as it was")
    func sigquitStopsImport() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("big"), days: 45, seed: 9, rawPacketsPerDay: 300)
        _ = try StoreFixtures.export(dir.file("big"), to: dir.file("big.json.gz"))
        let store = dir.file("s")
        try StoreFixtures.demoStore(store, days: 2)
        let before = try StoreSnapshot(store: store)
        let arguments = ["import", dir.file("big.json.gz"), "--store", store, "--replace", "--no-backfill"]
        for point in ["read:3", "import.staged:1"] {
            // A core-file limit that would let SIGQUIT's default action write one, in the
            // directory the command runs in.
            let stopped = try KillPoints.stop(arguments, at: point, with: SIGQUIT, environment: ["SCRATCH": dir.path],
                                              shellPrefix: ["/bin/sh", "-c", "ulimit -S -c \"$(ulimit -H -c)\"; cd \"$SCRATCH\"; exec \"$0\" \"$@\""])
            #expect(stopped.reached, "import never reached \(point): \(stopped.stderr)")
            #expect(stopped.reason == .uncaughtSignal && stopped.status == SIGQUIT,
                    "import at \(point) ended by \(stopped.reason == .exit ? "exit" : "signal") \(stopped.status), not SIGQUIT: \(stopped.stderr)")
            #expect(stopped.stderr.contains("Error: interrupted (SIGQUIT); its temporary files are removed"), "\(point): \(stopped.stderr)")
            #expect(try StoreSnapshot(store: store) == before, "SIGQUIT at \(point) changed the store")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: store).filter { $0.hasPrefix(".staging") }
            #expect(leftovers.isEmpty, "\(point): \(leftovers) left in the store")
            let cores = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("core") }
            #expect(cores.isEmpty, "\(point): a core file was written: \(cores)")
        }
    }

    /// A demo store `s` in `dir` and its export `a.json.gz`: what a command stopped part way reads.
    static func demoArchive(in dir: TemporaryDirectory, days: Int = 20, rawPacketsPerDay: Int = 40) throws -> (store: String, archive: String) {
        let store = dir.file("s"), archive = dir.file("a.json.gz")
        try StoreFixtures.demoStore(store, days: days, rawPacketsPerDay: rawPacketsPerDay)
        _ = try StoreFixtures.export(store, to: archive)
        return (store, archive)
    }

    @Test("a fatal signal (SIGABRT as when memory runs out, SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE) part way through an export removes the partial archive, says so in one line without a backtrace, exits 1 and leaves no core file; an import's store stays as it was")
    func fatalSignalRemovesThePartialArchive() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s")
        try StoreFixtures.demoStore(store, days: 20, rawPacketsPerDay: 40)
        // A core-file limit that would let the default action write one where the command runs.
        let shell = ["/bin/sh", "-c", "ulimit -S -c \"$(ulimit -H -c)\"; cd \"$SCRATCH\"; exec \"$0\" \"$@\""]
        for (signal, name) in [(SIGABRT, "SIGABRT"), (SIGSEGV, "SIGSEGV"), (SIGBUS, "SIGBUS"), (SIGILL, "SIGILL"), (SIGTRAP, "SIGTRAP"), (SIGFPE, "SIGFPE")] {
            let out = dir.file("out-\(name)")
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
            let stopped = try KillPoints.stop(["export", "--store", store, "-o", out + "/x.json.gz"], at: "write:2", with: signal,
                                              environment: ["SCRATCH": out], shellPrefix: shell)
            #expect(stopped.reached, "export never reached write:2: \(stopped.stderr)")
            #expect(stopped.reason == .exit && stopped.status == 1, "\(name): ended by \(stopped.reason == .exit ? "exit" : "signal") \(stopped.status): \(stopped.stderr)")
            #expect(stopped.stderr.contains("Error: stopped by a fatal error (\(name): memory ran out, or an internal fault); the partial files and folders it was writing are removed"),
                    "\(name): \(stopped.stderr)")
            for trace in ["Backtrace", "Thread 0", "Crash", "💣"] {
                #expect(!stopped.stderr.contains(trace), "\(name): a backtrace: \(stopped.stderr)")
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: out)
            #expect(left.isEmpty, "\(name): \(left) left where the archive was being written: \(stopped.stderr)")
        }
        let archive = dir.file("a.json.gz")
        _ = try StoreFixtures.export(store, to: archive)
        let target = dir.file("t")
        try StoreFixtures.demoStore(target, days: 2)
        let before = try StoreSnapshot(store: target)
        let stopped = try KillPoints.stop(["import", archive, "--store", target, "--replace", "--no-backfill"], at: "import.staged:1", with: SIGABRT,
                                          environment: ["SCRATCH": dir.path], shellPrefix: shell)
        #expect(stopped.reached && stopped.reason == .exit && stopped.status == 1, "import: \(stopped.stderr)")
        #expect(try StoreSnapshot(store: target) == before, "SIGABRT while an import was staged changed the store")
        // Into a new store under missing folders: the store goes, and so do the folders made for it.
        let nested = try KillPoints.stop(["import", archive, "--store", dir.file("n/a/b/store"), "--no-backfill"], at: "import.staged:1", with: SIGSEGV,
                                         environment: ["SCRATCH": dir.path], shellPrefix: shell)
        #expect(nested.reached && nested.reason == .exit && nested.status == 1, "import: \(nested.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("n")), "left: n/…; \(nested.stderr)")
        // Once committed, the store holds the archive, and the message says so.
        let afterCommit = try KillPoints.stop(["import", archive, "--store", target, "--replace"], at: "import.committed:1", with: SIGABRT,
                                              environment: ["SCRATCH": dir.path], shellPrefix: shell)
        #expect(afterCommit.reached && afterCommit.reason == .exit && afterCommit.status == 1, "import: \(afterCommit.stderr)")
        // The same words as an interruption's: what stands, and how to finish the rest.
        #expect(afterCommit.stderr.contains("Error: stopped by a fatal error (SIGABRT: memory ran out, or an internal fault) after its commit: the store holds the archive")
                && afterCommit.stderr.contains("; run `pulse-archive readiness --backfill` to finish it"), "\(afterCommit.stderr)")
        #expect(try StoreSnapshot(store: target).sameContent(as: try StoreSnapshot(store: store)), "the store does not hold the archive it was said to")
        // A folder being written (`tables`' staging folder of CSV files) goes with what it holds.
        let tablesOut = dir.file("tables-out")
        try FileManager.default.createDirectory(atPath: tablesOut, withIntermediateDirectories: false)
        let reads = try #require(try KillPoints.count(["tables", archive, "-o", dir.file("tables-calibration")])["read"])
        let midway = try KillPoints.stop(["tables", archive, "-o", tablesOut + "/t"], at: "read:\(max(1, reads / 2))", with: SIGSEGV,
                                         environment: ["SCRATCH": dir.path], shellPrefix: shell)
        #expect(midway.reached && midway.reason == .exit && midway.status == 1, "tables: \(midway.stderr)")
        let leftByTables = try FileManager.default.contentsOfDirectory(atPath: tablesOut)
        #expect(leftByTables.isEmpty, "tables stopped by SIGSEGV left \(leftByTables): \(midway.stderr)")
        let cores = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("core") }
        #expect(cores.isEmpty, "a core file was written: \(cores)")
    }

    @Test("an interruption and a fatal signal that come together: one of them removes everything, the other waits for its end; one Error line",
          arguments: [(SIGHUP, SIGABRT), (SIGTERM, SIGSEGV), (SIGSEGV, SIGTERM), (SIGABRT, SIGINT)])
    func interruptionAndFatalSignalTogether(first: Int32, second: Int32) throws {
        let dir = TemporaryDirectory()
        let (_, archive) = try Self.demoArchive(in: dir, days: 30, rawPacketsPerDay: 60)
        let reads = try #require(try KillPoints.count(["tables", archive, "-o", dir.file("calibration")])["read"])
        // Both are pending when the process goes on: which is taken first is the scheduler's
        // choice, so each pair runs at several points.
        for point in KillPoints.spread("read", 4, over: reads) {
            let out = dir.file("out-\(first)-\(point)")
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
            let stopped = try KillPoints.stop(["tables", archive, "-o", out + "/t"], at: point, with: second, beforeSignal: { process in
                #expect(kill(process, first) == 0)
            })
            #expect(stopped.reached, "\(point): \(stopped.stderr)")
            let left = try FileManager.default.contentsOfDirectory(atPath: out)
            #expect(left.isEmpty, "\(first) then \(second) at \(point) left \(left): \(stopped.stderr)")
            #expect(stopped.stderr.components(separatedBy: "Error: ").count == 2, "\(point): \(stopped.stderr)")
            let fatal = stopped.reason == .exit && stopped.status == 1 && stopped.stderr.contains("Error: stopped by a fatal error (")
            let interrupted = stopped.reason == .uncaughtSignal && stopped.stderr.contains("Error: interrupted (")
            #expect(fatal || interrupted, "\(point): \(stopped.reason) \(stopped.status): \(stopped.stderr)")
        }
        // An import into a new store under folders it makes: the store and the folders go.
        let importReads = try #require(try KillPoints.count(["import", archive, "--store", dir.file("calibration-store"), "--no-backfill"])["read"])
        for point in KillPoints.spread("read", 3, over: importReads) + ["import.staged:1"] {
            let stopped = try KillPoints.stop(["import", archive, "--store", dir.file("n/a/b/store"), "--no-backfill"], at: point, with: second,
                                              beforeSignal: { process in #expect(kill(process, first) == 0) })
            #expect(stopped.reached, "\(point): \(stopped.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.file("n")), "\(first) then \(second) at \(point) left n/…: \(stopped.stderr)")
            #expect(stopped.stderr.components(separatedBy: "Error: ").count == 2, "\(point): \(stopped.stderr)")
        }
    }

    #if os(Linux)
    @Test("what cannot be removed (a tree deeper than a signal handler's removal reaches, a path past PATH_MAX for the interruption's) is named in the message, never said to be removed")
    func leftoversAreNamed() throws {
        let dir = TemporaryDirectory()
        let (_, archive) = try Self.demoArchive(in: dir)
        let reads = try #require(try KillPoints.count(["tables", archive, "-o", dir.file("calibration")])["read"])
        for (signal, depth, name) in [(SIGSEGV, 130, "d"), (SIGTERM, 400, "dddddddddd")] {
            let out = dir.file("out-\(signal)")
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
            // Planted in `tables`' staging folder while it is stopped: nested folders, made one
            // step at a time (the whole path passes PATH_MAX for the second).
            let stopped = try KillPoints.stop(["tables", archive, "-o", out + "/t"], at: "read:\(max(1, reads / 2))", with: signal, beforeSignal: { _ in
                let staging = try #require(try FileManager.default.contentsOfDirectory(atPath: out).first { $0.hasPrefix(".t.staging-") })
                var folder = open(out + "/" + staging, O_RDONLY | O_DIRECTORY)
                for _ in 0..<depth where folder >= 0 {
                    let next = mkdirat(folder, name, 0o700) == 0 ? openat(folder, name, O_RDONLY | O_DIRECTORY) : -1
                    close(folder)
                    folder = next
                }
                #expect(folder >= 0, "planting \(depth) folders: \(String(cString: strerror(errno)))")
                close(folder)
            })
            let left = try FileManager.default.contentsOfDirectory(atPath: out)
            #expect(left.count == 1 && left[0].hasPrefix(".t.staging-"), "\(signal): \(left)")
            if signal == SIGSEGV {
                #expect(stopped.reason == .exit && stopped.status == 1, "\(stopped.stderr)")
            } else {
                #expect(stopped.reason == .uncaughtSignal && stopped.status == signal, "\(stopped.stderr)")
            }
            #expect(stopped.stderr.contains(", except \(out)/\(left.first ?? "?"), which could not be: remove it by hand"), "\(signal): \(stopped.stderr)")
            #expect(!stopped.stderr.contains("removed\n"), "\(signal): \(stopped.stderr)")
            // One line says what happened: a worker that finds its folder gone meanwhile (set
            // aside by the removal) adds no second "Error:" naming it.
            #expect(stopped.stderr.components(separatedBy: "Error: ").count == 2, "\(signal): \(stopped.stderr)")
            // What the handler left, removed by a tool that walks any depth.
            #expect(try CLI.collect(Self.shell("rm -rf '\(out)'")).exitCode == 0)
        }
    }

    /// `/bin/sh -c command`.
    static func shell(_ command: String) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        return process
    }

    @Test("a fatal signal on a worker thread while an import into a new store under missing folders goes on: the store and the folders made for it go, though the main thread fails meanwhile and lets go of them")
    func fatalSignalOnAWorkerRemovesTheFoldersMade() throws {
        let dir = TemporaryDirectory()
        let (store, archive) = try Self.demoArchive(in: dir)
        let top = dir.file("n")
        // Stopped on the staging worker's thread, its work done; the handler runs there while
        // the main thread goes on, finds its store gone from under it, and fails. The handler
        // holds after removing the store until the main thread waits for the end: its own
        // clean-up of the folders it made, which came first under load in CI, lands in between.
        let stopped = try KillPoints.stop(["import", archive, "--store", top + "/a/b/store", "--no-backfill"], at: "worker.finished:2", with: SIGSEGV,
                                          environment: ["PULSE_ARCHIVE_TEST_FATAL_HOLD": "1"], toThread: { pid in
            KillPoints.threads(of: pid).first { $0 != pid && !KillPoints.blocks(SIGSEGV, thread: $0, of: pid) }
        })
        #expect(stopped.reached && stopped.reason == .exit, "\(stopped.stderr)")
        if !stopped.signalled {
            // The command ended between its pause line and its stop (the main thread does not
            // wait for the worker's thread): no signal was sent, and the import is whole.
            #expect(stopped.status == 0, "\(stopped.stderr)")
            #expect(try StoreSnapshot(store: top + "/a/b/store").sameContent(as: try StoreSnapshot(store: store)), "\(stopped.stderr)")
            return
        }
        #expect(stopped.status == 1 && stopped.stderr.contains("Error: stopped by a fatal error (SIGSEGV"), "\(stopped.stderr)")
        if stopped.stderr.contains("after its commit: the store holds the archive") {
            // Under load the main thread may commit before the signalled thread runs: the
            // handler then waits for the commit, and the store stands, as it says.
            #expect(try StoreSnapshot(store: top + "/a/b/store").sameContent(as: try StoreSnapshot(store: store)), "\(stopped.stderr)")
        } else {
            #expect(!FileManager.default.fileExists(atPath: top), "left \((try? FileManager.default.subpathsOfDirectory(atPath: top)) ?? []): \(stopped.stderr)")
        }
    }

    @Test("a fatal signal on another thread than the one committing: the archive is either whole and said to be written (or the command ended first, exit 0), or not there and said to be removed; never the one with the other message")
    func fatalSignalOnAnotherThreadDuringTheCommit() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s")
        try StoreFixtures.demoStore(store, days: 20, rawPacketsPerDay: 40)
        // Stopped on the last compression worker's thread, its work handed back: the main thread
        // goes on to the commit while the handler runs there. (At the commit itself the only
        // other thread is the interruption's watcher, which blocks the fatal signals: one sent
        // to it was never taken, and every round ended 0.)
        let finished = try #require(try KillPoints.count(["export", "--store", store, "-o", dir.file("calibration.json.gz")])["worker.finished"])
        var signalled = 0
        for round in 1...6 {
            let out = dir.file("out\(round)")
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
            let stopped = try KillPoints.stop(["export", "--store", store, "-o", out + "/x.json.gz"], at: "worker.finished:\(finished)", with: SIGABRT, toThread: { pid in
                KillPoints.threads(of: pid).first { $0 != pid && !KillPoints.blocks(SIGABRT, thread: $0, of: pid) }
            })
            if stopped.signalled { signalled += 1 }
            let left = try FileManager.default.contentsOfDirectory(atPath: out)
            let saysWritten = stopped.stderr.contains("after its commit: ")
            #expect(stopped.reached && stopped.reason == .exit, "round \(round): \(stopped.stderr)")
            #expect(!stopped.stderr.contains("cannot create"), "round \(round): \(stopped.stderr)")
            if stopped.status == 0 {
                // The main thread ran to its end before the signalled thread was scheduled (the
                // handler waits for it), or before the worker stopped the process at its pause
                // (no signal sent): the work is done and the process ends as it would have.
                #expect(left == ["x.json.gz"] && !stopped.stderr.contains("Error:"), "round \(round): exit 0, left \(left): \(stopped.stderr)")
                continue
            }
            #expect(stopped.status == 1 && stopped.stderr.contains("Error: stopped by a fatal error (SIGABRT"), "round \(round): \(stopped.stderr)")
            if saysWritten {
                #expect(left == ["x.json.gz"], "round \(round): said written, left \(left): \(stopped.stderr)")
                #expect(try CLI.run(["verify", out + "/x.json.gz", "-q"]).exitCode == 0, "round \(round): the archive said written does not verify")
            } else {
                #expect(left.isEmpty, "round \(round): said removed, left \(left): \(stopped.stderr)")
            }
        }
        // A round ends before its signal only when the main thread exits in the instant
        // between the worker's pause line and its stop: never in all six.
        #expect(signalled > 0, "no round was signalled")
    }
    #endif

    #if os(Linux)
    /// A pseudo-terminal: the test keeps the master, to read what the command writes, and a
    /// descriptor of the slave, to read the terminal's settings whatever the command did.
    final class PseudoTerminal {
        let master: Int32
        let slave: Int32
        let slavePath: String

        /// The C library's pseudo-terminal calls, which Swift's Glibc module leaves out (they
        /// need _XOPEN_SOURCE).
        private static func function<F>(_ name: String, as type: F.Type) throws -> F {
            unsafeBitCast(try #require(dlsym(nil, name), "no \(name) in the C library"), to: type)
        }

        init() throws {
            typealias OnDescriptor = @convention(c) (Int32) -> Int32
            let openpt = try Self.function("posix_openpt", as: OnDescriptor.self)
            let grantpt = try Self.function("grantpt", as: OnDescriptor.self)
            let unlockpt = try Self.function("unlockpt", as: OnDescriptor.self)
            let ptsname = try Self.function("ptsname", as: (@convention(c) (Int32) -> UnsafeMutablePointer<CChar>?).self)
            master = openpt(O_RDWR | O_NOCTTY)
            try #require(master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0, "no pseudo-terminal: \(String(cString: strerror(errno)))")
            _ = fcntl(master, F_SETFD, FD_CLOEXEC)
            slavePath = String(cString: try #require(ptsname(master)))
            slave = open(slavePath, O_RDWR | O_NOCTTY | O_CLOEXEC)
            try #require(slave >= 0)
        }

        deinit {
            close(master)
            close(slave)
        }

        /// True when the process is a zombie (not reaped yet: only the test waits for it).
        static func ended(_ pid: pid_t) -> Bool {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return true }
            return stat[close...].dropFirst(2).first == "Z"
        }

        var echoes: Bool {
            var settings = termios()
            return tcgetattr(slave, &settings) == 0 && settings.c_lflag & tcflag_t(ECHO) != 0
        }

        /// Starts `arguments` in a session of its own whose controlling terminal is this one
        /// (standard input, output and error too).
        func spawn(_ arguments: [String], environment: [String: String]) throws -> pid_t {
            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            // POSIX_SPAWN_SETSID (glibc): the child leads a new session, so the terminal it
            // opens first becomes its controlling terminal.
            posix_spawnattr_setflags(&attributes, 0x80)
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, slavePath, O_RDWR, 0)
            posix_spawn_file_actions_adddup2(&actions, 0, 1)
            posix_spawn_file_actions_adddup2(&actions, 0, 2)
            let argv = arguments.map { strdup($0) } + [nil]
            let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { (argv + envp).forEach { free($0) } }
            var pid: pid_t = 0
            let status = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
            try #require(status == 0, "posix_spawn: \(String(cString: strerror(status)))")
            return pid
        }

        /// Reads what the command `pid` writes until `text` has come (at most 60 s, and not
        /// after the command ended).
        func read(until text: String, from pid: pid_t) throws -> String {
            var collected = Data()
            let deadline = Date().addingTimeInterval(60)
            var buffer = [UInt8](repeating: 0, count: 1024)
            while collected.range(of: Data(text.utf8)) == nil {
                var ready = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
                let left = Int32(max(0, deadline.timeIntervalSinceNow) * 1000)
                try #require(left > 0, "no \"\(text)\" within 60 s: \(String(decoding: collected, as: UTF8.self))")
                guard poll(&ready, 1, min(left, 100)) > 0 else {
                    try #require(!Self.ended(pid), "the command ended before \"\(text)\": \(String(decoding: collected, as: UTF8.self))")
                    continue
                }
                let count = buffer.withUnsafeMutableBytes { Glibc.read(master, $0.baseAddress, $0.count) }
                try #require(count > 0, "the terminal closed before \"\(text)\": \(String(decoding: collected, as: UTF8.self))")
                collected += buffer[..<count]
            }
            return String(decoding: collected, as: UTF8.self)
        }
    }

    /// Waits (at most 60 s) for `pid` to end; its wait status, or nil (it was then killed).
    static func waitStatus(_ pid: pid_t) -> Int32? {
        let deadline = Date().addingTimeInterval(60)
        var status: Int32 = 0
        while Date() < deadline {
            if waitpid(pid, &status, WNOHANG) == pid { return status }
            usleep(1_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
        return nil
    }
    #endif

    @Test("SIGINT, SIGTERM, SIGHUP or SIGQUIT at the passphrase prompt (a pseudo-terminal, core dumps already off there) ends the command by that signal, a fatal one (SIGABRT, SIGSEGV) with exit 1, each with the terminal's echo back on")
    func echoBackAfterSignalAtPrompt() throws {
        #if os(Linux)
        let f = try Fixture(days: 2, rawPacketsPerDay: 4)
        var environment = ProcessInfo.processInfo.environment
        environment["PULSE_ARCHIVE_PASSPHRASE"] = nil
        environment["TZ"] = "UTC"
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV] {
            let terminal = try PseudoTerminal()
            #expect(terminal.echoes, "a new pseudo-terminal echoes")
            // Through /bin/sh with the soft core-file limit raised to the hard one, so that a
            // limit of 0 at the prompt is the command's own doing.
            let pid = try terminal.spawn(["/bin/sh", "-c", "ulimit -S -c \"$(ulimit -H -c)\"; exec \"$0\" \"$@\"", CLI.executable, "inspect", f.sealed],
                                         environment: environment)
            _ = try terminal.read(until: "Passphrase: ", from: pid)
            #expect(!terminal.echoes, "the prompt did not turn echo off")
            let limit = try Self.coreLimit(pid)
            #expect(limit == "0", "at the passphrase prompt the core-file limit is \(limit)")
            kill(pid, signal)
            let status = try #require(Self.waitStatus(pid), "signal \(signal) at the prompt did not end the command within 60 s")
            let ending = status & 0x7f
            if signal == SIGABRT || signal == SIGSEGV {
                // A fatal signal ends the command with exit 1 (the fatal-signal handler).
                #expect(ending == 0 && (status >> 8) & 0xff == 1, "signal \(signal) at the prompt: the command ended with wait status \(status)")
            } else {
                #expect(ending == signal, "signal \(signal) at the prompt: the command ended with wait status \(status)")
            }
            #expect(terminal.echoes, "signal \(signal) at the prompt left the terminal with echo off")
        }
        #endif
    }

    @Test("the command line's passphrase is held in one buffer, zeroed by the wipe the keys call once the file key is derived; never asked again after")
    func passphraseCacheWiped() throws {
        var asked = 0
        let cache = PassphraseCache {
            asked += 1
            return Array(Self.passphrase.utf8)
        }
        try cache.load()
        #expect(try cache.value() == Array(Self.passphrase.utf8) && asked == 1)
        let held = try #require(cache.secret)
        #expect(!held.isAllZero)
        let file = try PulseArchiveEndToEndTests.encrypt([1, 2, 3], passphrase: Self.passphrase)
        let keys = AgeKeys(passphrase: { try cache.value() }).wipingSecrets(afterOpening: 1, then: cache.wipe)
        let source = try AgeDecryptingSource(source: MemorySource(file), name: "p.age", keys: keys)
        var plaintext = [UInt8](repeating: 0, count: 3)
        #expect(try plaintext.withUnsafeMutableBytes { try source.read(into: $0) } == 3 && plaintext == [1, 2, 3])
        #expect(held.isAllZero, "the passphrase is still in memory after the file key was derived")
        #expect(throws: KeyError.self) { try cache.value() }
        #expect(asked == 1)
    }

    @Test("a scratch file has no name: made with O_TMPFILE, or (where that is refused) created and unlinked before its first byte; 0600 either way, nothing in its directory")
    func scratchFilesHaveNoName() throws {
        let dir = TemporaryDirectory()
        for (way, file) in [("createUnnamed", try SystemFile.createUnnamed(in: dir.path, name: "a")),
                            ("createUnlinked", try SystemFile.createUnlinked(in: dir.path, name: "b"))] {
            try Array(Self.marker.utf8).withUnsafeBytes { try file.write($0) }
            var info = stat()
            #expect(fstat(file.fd, &info) == 0 && info.st_nlink == 0, "\(way): the file has \(info.st_nlink) names")
            #expect(info.st_mode & 0o777 == 0o600, "\(way): mode \(String(info.st_mode & 0o777, radix: 8))")
            var back = [UInt8](repeating: 0, count: Self.marker.utf8.count)
            #expect(try back.withUnsafeMutableBytes { try file.read(into: $0, at: 0) } == back.count && back == Array(Self.marker.utf8))
            #expect(Self.entries(dir.path).isEmpty, "\(way) left \(Self.entries(dir.path))")
        }
        #if os(Linux)
        // ext4 and tmpfs (where the tests run) have O_TMPFILE: the unnamed way must be the one
        // taken, not the fallback whose name a SIGKILL between mkstemp and unlink leaves.
        let fd = SystemCalls.openUnnamed(in: dir.path)
        #expect(fd != nil, "O_TMPFILE was not used: \(String(cString: strerror(errno)))")
        if let fd { close(fd) }
        #endif
    }

    /// Whether the memory of process `pid` holds `needle` anywhere it can be read (/proc/PID/maps
    /// and /proc/PID/mem; the process is stopped).
    static func memory(of pid: Int32, holds needle: [UInt8]) throws -> Bool {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        let memory = open("/proc/\(pid)/mem", O_RDONLY)
        try #require(memory >= 0, "cannot open /proc/\(pid)/mem: \(String(cString: strerror(errno)))")
        defer { close(memory) }
        let wanted = Data(needle)
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("r"), !line.hasSuffix("[vvar]"), !line.hasSuffix("[vsyscall]") else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard bounds.count == 2, bounds[1] > bounds[0] else { continue }
            var region = Data(count: Int(bounds[1] - bounds[0]))
            let got = region.withUnsafeMutableBytes { pread(memory, $0.baseAddress, $0.count, off_t(truncatingIfNeeded: bounds[0])) }
            guard got > 0 else { continue }
            if region.prefix(got).range(of: wanted) != nil { return true }
        }
        return false
    }

    /// Whether this test process holds CAP_SYS_PTRACE (root in a container does).
    static var mayTrace: Bool {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let capabilities = status.split(separator: "\n").first { $0.hasPrefix("CapEff:") }
            .flatMap { UInt64($0.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16) } ?? 0
        return capabilities & (1 << 19) != 0
    }

    @Test("once the file key is derived, neither the identity's X25519 scalar nor the passphrase is anywhere in the process's memory",
          .enabled(if: Capability.enabled(mayTrace)))
    func secretsGoneFromMemory() throws {
        #if os(Linux)
        try Capability.require(Self.mayTrace, "CAP_SYS_PTRACE (root), to read the memory of a process that is not dumpable")
        let f = try Fixture(days: 2, rawPacketsPerDay: 4)
        let text = try String(contentsOfFile: f.identityFile, encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("AGE-SECRET-KEY-1") })
        let identity = try AgeX25519Identity(bech32: String(line))
        let scalar = identity.secret.withBytes { Array($0) }
        let cases: [(String, [String], secret: [UInt8], keyFile: String)] = [
            ("the identity's scalar", ["inspect", f.toIdentity, "-i", f.identityFile], scalar, f.identityFile),
            ("the passphrase", ["inspect", f.sealed, "--passphrase-file", f.passphraseFile], Array(Self.passphrase.utf8), f.passphraseFile),
        ]
        for (what, arguments, secret, keyFile) in cases {
            // read:1 comes after the header was opened: the file key is derived.
            try Self.whilePaused(arguments, at: "read:1") { (pid: Int32) throws in
                // The control: the probe finds what the process does hold (its arguments).
                #expect(try Self.memory(of: pid, holds: Array(keyFile.utf8)), "the probe does not see the process's memory")
                #expect(try !Self.memory(of: pid, holds: secret), "\(what) is in the memory of \(arguments[0]) once the file key is derived")
            }
        }
        #endif
    }
}

/// `plaintext` encrypted with `passphrase` (work factor 10: quick).
func encrypt(_ plaintext: [UInt8], passphrase: String) throws -> [UInt8] {
    final class Collected: ByteSink {
        var bytes: [UInt8] = []
        var handleOwners: [HandleOwner] { [] }
        func write(_ buffer: UnsafeRawBufferPointer) throws { bytes += buffer }
        func finish() throws {}
    }
    let collected = Collected()
    let sink = try AgeEncryptingSink(output: collected, passphrase: Array(passphrase.utf8), workFactor: 10)
    try plaintext.withUnsafeBytes { try sink.write($0) }
    try sink.finish()
    return collected.bytes
}
