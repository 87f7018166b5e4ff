import Foundation
import Testing
@testable import PulseArchive
@testable import PulseStore
import PulseSystem
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// `-` for standard input and `-o -` for standard output, through real pipes and the built
/// binary, and the default export name that never collides.
@Suite("Pipes and names")
struct PipeTests {
    /// A JSON text whose top-level members are `members`, in that order (each already JSON).
    static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    @Test("a named pipe or <(…) is read once: inspect, verify, diff and tables take it; a cut one fails, never waits")
    func namedPipesAndProcessSubstitution() throws {
        let dir = TemporaryDirectory()
        let golden = Repository.sampleFormat2
        for command in ["inspect <(cat '\(golden)')", "verify <(cat '\(golden)') -q", "diff <(cat '\(golden)') <(gzip -dc '\(golden)') --exit-code",
                        "tables <(cat '\(golden)') -o from-pipe -q"] {
            let result = try CLI.shell("bash -c 'timeout 120 \"$PA\" \(command.replacingOccurrences(of: "'", with: "'\\''"))'", in: dir.path)
            #expect(result.exitCode == 0, "\(command): \(result.stderr)")
        }
        #expect(FileManager.default.fileExists(atPath: dir.file("from-pipe/tables.json")))
        // A FIFO whose writer has left is never opened a second time (that would wait forever):
        // whole, it reads; cut, the reader names the cut.
        let whole = try CLI.shell("mkfifo p && (cat '\(golden)' > p &) && timeout 120 \"$PA\" inspect p", in: dir.path)
        #expect(whole.exitCode == 0 && whole.stdout.contains("format 2"), "\(whole.stderr)")
        let cut = try CLI.shell("(head -c 100 '\(golden)' > p &) && timeout 120 \"$PA\" inspect p", in: dir.path)
        #expect(cut.exitCode == 1 && cut.stderr.contains("p ends early"), "exit \(cut.exitCode): \(cut.stderr)")
    }

    @Test("export -o - into a pipe, import - from it: the store arrives whole, and no file named - appears")
    func exportToImportThroughAPipe() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("source"), days: 10)
        let result = try CLI.shell("\"$PA\" export --store source -o - | \"$PA\" import - --store copy --no-backfill", in: dir.path)
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Imported standard input into copy"))
        #expect(!FileManager.default.fileExists(atPath: dir.file("-")))
        #expect(try StoreSnapshot(store: dir.file("copy")).sameContent(as: StoreSnapshot(store: dir.file("source"))))
    }

    @Test("export -o - writes the archive alone on stdout; its report, --json too, goes to stderr")
    func exportToStandardOutputReportsOnStandardError() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 3)
        try FileManager.default.createDirectory(atPath: dir.file("tmp"), withIntermediateDirectories: false)
        let result = try CLI.shell("TMPDIR=\"$PWD/tmp\" \"$PA\" export --store s -o - --json > out.json.gz", in: dir.path)
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stderr.utf8)) as? [String: Any])
        #expect(report["path"] as? String == "-")
        let written = try #require(FileManager.default.contents(atPath: dir.file("out.json.gz")))
        #expect((report["bytes"] as? [String: Any])?["compressed"] as? Int == written.count)
        let inspected = try CLI.run(["inspect", dir.file("out.json.gz"), "--json"])
        #expect(inspected.exitCode == 0, "\(inspected.stderr)")
        // Nothing is left in the temporary directory the archive was staged in.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("tmp")).isEmpty)
    }

    @Test("a reader that goes away (export -o - | head): exit 1 naming standard output, no copy of the archive left in $TMPDIR")
    func readerGoesAway() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 30)
        try FileManager.default.createDirectory(atPath: dir.file("tmp"), withIntermediateDirectories: false)
        let result = try CLI.shell("{ TMPDIR=\"$PWD/tmp\" \"$PA\" export --store s -o - 2>err.txt; echo $? >rc.txt; } | head -c 100 >/dev/null; cat rc.txt err.txt", in: dir.path)
        #expect(result.stdout.hasPrefix("1\n"), "\(result.stdout)")
        #expect(result.stdout.contains("standard output"), "\(result.stdout)")
        // The reader got part of an archive, and the message says so.
        #expect(result.stdout.contains("part of the archive: what read them holds an incomplete archive"), "\(result.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("tmp")).isEmpty)
        // The count is what the system took: /dev/full took nothing of the megabyte whose write
        // failed (it said "received 1048576 bytes"); a pipe read 100 bytes took a pipe's worth.
        let full = try CLI.shell("TMPDIR=\"$PWD/tmp\" \"$PA\" export --store s -o - >/dev/full 2>err.txt; echo $?; cat err.txt", in: dir.path)
        #expect(full.stdout.hasPrefix("1\n") && full.stdout.contains("No space left on device") && !full.stdout.contains("received"), "\(full.stdout)")
        let counted = try #require(result.stdout.split(separator: " ").firstIndex(of: "received").map { Int(result.stdout.split(separator: " ")[$0 + 1]) ?? 0 })
        #expect(counted > 0 && counted < 1 << 20, "\(result.stdout)")
    }

    @Test("an argument that is not UTF-8 is refused, exit 64, the byte shown: read repaired (U+FFFD) it named another file, and verify passed a sound look-alike of a cut archive")
    func argumentsThatAreNotUTF8() throws {
        let dir = TemporaryDirectory()
        // A cut archive under a name with byte 0xFF, and a sound one under the name repaired.
        try CLI.shell("head -c 300 \"\(Repository.sampleFormat2)\" > \"$(printf 'night\\377.json.gz')\"; cp \"\(Repository.sampleFormat2)\" \"$(printf 'night\\357\\277\\275.json.gz')\"",
                      in: dir.path, expectingSuccess: true)
        for command in ["verify \"$(printf 'night\\377.json.gz')\"", "prune \"$(printf 'bk\\377')\" --keep-last 1", "export --store s -o \"$(printf 'x\\377.json.gz')\""] {
            let result = try CLI.shell("\"$PA\" \(command)", in: dir.path)
            #expect(result.exitCode == 64 && result.stdout.isEmpty, "\(command): exit \(result.exitCode) \(result.stdout)")
            #expect(result.stderr.hasPrefix("Error: argument ") && result.stderr.contains("is not UTF-8 text") && result.stderr.contains("\\xFF"), "\(command): \(result.stderr)")
        }
        // The variables read as names or a secret: refused too, a passphrase never shown.
        for (variable, command) in [("PULSE_STORE", "export -o out.json.gz"), ("TMPDIR", "export --store s -o -"), ("PULSE_ARCHIVE_PASSPHRASE", "export --store s -p -o out.json.gz.age")] {
            let result = try CLI.shell("\(variable)=\"$(printf 'pw\\377')\" \"$PA\" \(command)", in: dir.path)
            #expect(result.exitCode == 64 && result.stdout.isEmpty && result.stderr.contains("\(variable) is not UTF-8 text") && !result.stderr.contains("pw"),
                    "\(variable): exit \(result.exitCode) \(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).count == 2)
    }

    @Test("export -o - interrupted while it sends the archive says that standard output holds part of one; interrupted before, it says nothing of it")
    func interruptedWhileSending() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 30)
        let command = ["export", "--store", dir.file("s"), "-o", "-", "--compression", "none"]
        // The scratch file's writes come first, then standard output's: the last is a send.
        let writes = try #require(try KillPoints.count(command)["write"])
        let toFile = try #require(try KillPoints.count(["export", "--store", dir.file("s"), "-o", dir.file("x.json"), "--compression", "none"])["write"])
        #expect(writes > toFile, "\(writes) writes to -, \(toFile) to a file")
        let sending = try KillPoints.expectStopped(command, at: "write:\(writes)", with: SIGTERM)
        #expect(sending.stderr.contains("Error: interrupted (SIGTERM); its temporary files are removed; standard output received part of the archive"), "\(sending.stderr)")
        let staging = try KillPoints.expectStopped(command, at: "write:1", with: SIGTERM)
        #expect(staging.stderr.contains("Error: interrupted (SIGTERM)") && !staging.stderr.contains("standard output"), "\(staging.stderr)")
    }

    @Test("standard output that cannot take the report (full, closed): Error and exit 1, never a crash", arguments: ["> /dev/full", ">&-"])
    func unwritableStandardOutput(redirect: String) throws {
        let dir = TemporaryDirectory()
        for command in ["inspect \"\(Repository.sampleFormat2)\"", "inspect \"\(Repository.sampleFormat2)\" --json", "keygen -o k\(redirect.count).txt", "--version",
                        "import \"\(Repository.sampleFormat1)\" --store s --no-backfill"] {
            let result = try CLI.shell("\"$PA\" \(command) \(redirect)", in: dir.path)
            #expect(result.exitCode == 1, "\(command) \(redirect): \(result.stderr)")
            #expect(result.stderr.hasPrefix("Error: cannot write standard output") && result.stderr.contains("work is done and stands"),
                    "\(command) \(redirect): \(result.stderr)")
        }
        // verify's report is its whole result: the verdict is said instead (it was "the work is
        // done and stands", the archive's fault nowhere).
        for (command, verdict) in [("verify nope.json --json", "its verdict: FAILED, 1 error: the first: cannot open nope.json"),
                                   ("verify \"\(Repository.sampleFormat2)\"", "its verdict: OK")] {
            let result = try CLI.shell("\"$PA\" \(command) \(redirect)", in: dir.path)
            #expect(result.exitCode == 1 && result.stderr.contains("verify's report is lost; \(verdict)") && !result.stderr.contains("work is done"),
                    "\(command) \(redirect): \(result.stderr)")
        }
        // The import before it committed: the report's failure undid nothing.
        #expect(try StoreSnapshot(store: dir.file("s")).rows["measurements"]?.isEmpty == false)
        // With the archive on standard output, the report asked for goes to standard error:
        // one that is full fails the command too, the archive out whole; one closed is refused
        // before any work.
        let errorStream = redirect.replacingOccurrences(of: ">", with: "2>")
        let stream = try CLI.shell("\"$PA\" export --store s -o - --json > a.json.gz \(errorStream); echo $?; gzip -t a.json.gz && echo whole", in: dir.path)
        #expect(stream.stdout == (redirect == ">&-" ? "64\n" : "1\nwhole\n"), "\(errorStream): \(stream.stdout) \(stream.stderr)")
    }

    @Test("a standard stream the caller closed is never taken by a file of ours: - refuses a closed stdin, -o - a closed stdout; the archive written beside a closed stdout is whole")
    func closedStandardStreams() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 3)
        try FileManager.default.createDirectory(atPath: dir.file("tmp"), withIntermediateDirectories: false)
        for command in ["inspect -", "verify -", "import - --store t", "diff \"\(Repository.sampleFormat2)\" -", "tables - -o out"] {
            let result = try CLI.shell("TMPDIR=\"$PWD/tmp\" \"$PA\" \(command) <&-", in: dir.path)
            #expect(result.exitCode == 64 && result.stderr.contains("Standard input is closed"), "\(command): \(result.stderr)")
        }
        let stream = try CLI.shell("TMPDIR=\"$PWD/tmp\" \"$PA\" export --store s -o - >&-", in: dir.path)
        #expect(stream.exitCode == 64 && stream.stderr.contains("Standard output is closed"), "\(stream.stderr)")
        // With stdin, stdout and stderr closed, an export and an import do their work whole.
        let quiet = try CLI.shell("\"$PA\" export --store s -o a.json.gz <&- >&- 2>&-; echo $? > rc1; \"$PA\" import a.json.gz --store t --no-backfill <&- >&- 2>&-; echo $? > rc2; cat rc1 rc2",
                                  in: dir.path)
        #expect(quiet.stdout == "1\n1\n", "\(quiet.stdout)")
        // keygen writes the identity itself on standard output: closed, the key would be lost.
        let keygen = try CLI.shell("\"$PA\" keygen >&-", in: dir.path)
        #expect(keygen.exitCode == 1 && keygen.stderr.contains("cannot write standard output: it was closed") && !keygen.stderr.contains("Public key"), "\(keygen.stderr)")
        #expect(try CLI.run(["verify", dir.file("a.json.gz"), "--store", dir.file("t")]).exitCode == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("tmp")).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: dir.file("out")))
    }

    @Test("inspect - reads a gzip archive from a pipe as it reads the file, its size counted as it streams past")
    func inspectFromAPipe() throws {
        let fromFile = try CLI.run(["inspect", Repository.sampleFormat2, "--json"])
        let fromPipe = try CLI.shell("cat \"\(Repository.sampleFormat2)\" | \"$PA\" inspect - --json", in: NSTemporaryDirectory())
        #expect(fromPipe.exitCode == 0, "\(fromPipe.stderr)")
        #expect(fromPipe.stdout == fromFile.stdout)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: Repository.sampleFormat2)[.size] as? Int)
        #expect((fromPipe.json["bytes"] as? [String: Any])?["compressed"] as? Int == size)
    }

    @Test("verify - checks an archive from a pipe, its round trip included")
    func verifyFromAPipe() throws {
        let result = try CLI.shell("gunzip -c \"\(Repository.sampleFormat2)\" | \"$PA\" verify - --json", in: NSTemporaryDirectory())
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.json["ok"] as? Bool == true)
    }

    @Test("a file named - is read as ./-")
    func fileNamedDash() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.copyItem(atPath: Repository.sampleFormat1, toPath: dir.file("-"))
        let result = try CLI.run(["inspect", "./-"], in: dir.path)
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stdout.contains("./-"))
    }

    @Test("a pipe cut half way refuses the import and leaves the store byte-identical", arguments: [0.5, 0.97])
    func cutPipeLeavesStoreUntouched(fraction: Double) throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("store"), days: 20)
        try StoreFixtures.demoStore(dir.file("other"), days: 30, seed: 9)
        _ = try StoreFixtures.export(dir.file("other"), to: dir.file("other.json.gz"))
        let database = dir.file("store") + "/pulse.sqlite"
        let before = try #require(FileManager.default.contents(atPath: database))
        let size = try #require(try FileManager.default.attributesOfItem(atPath: dir.file("other.json.gz"))[.size] as? Int)
        let result = try CLI.shell("head -c \(Int(Double(size) * fraction)) other.json.gz | \"$PA\" import - --store store --replace", in: dir.path)
        #expect(result.exitCode == 1)
        #expect(result.stderr.contains("standard input"), "\(result.stderr)")
        #expect(FileManager.default.contents(atPath: database) == before)
        let entries = try FileManager.default.contentsOfDirectory(atPath: dir.file("store"))
        #expect(!entries.contains { $0.hasPrefix(".staging") || $0 == "backups" }, "\(entries)")
    }

    /// Rows whose dialect only a key far behind them tells: the reader must look past more
    /// than a megabyte of tables both dialects share, which a pipe can only do by keeping it.
    @Test("a table before anything that tells the dialect: a pipe reads as the file does, past a megabyte of look ahead", arguments: ["android", "ios"])
    func dialectLookAheadThroughAPipe(dialect: String) throws {
        let dir = TemporaryDirectory()
        let text: String
        if dialect == "android" {
            let rows = (0..<12_000).map { i -> String in
                let at = 1_772_258_400_000 + Int64(i) * 60_000
                return "{\"id\":\"\(RowFactory.uuid(i))\",\"kindRaw\":\"HEART_RATE\",\"value\":\(60 + i % 40),\"unit\":\"bpm\","
                    + "\"timestamp\":\(at),\"createdAt\":\(at),\"sourceRaw\":\"ring\",\"confidenceRaw\":\"known\"}"
            }
            text = Self.object([("measurements", "[" + rows.joined(separator: ",") + "]"), ("appVersion", "\"2.3.1\""),
                                ("formatVersion", "1"), ("exportedAt", "1772306100000")])
        } else {
            // The app's dialect: the tables both dialects have first, then the app's own, then the envelope.
            try StoreFixtures.demoStore(dir.file("s"), days: 100)
            _ = try PulseStore.exportArchive(storeDirectory: dir.file("s"), to: dir.file("s.json"), options: ExportOptions(
                appVersion: "tests", exportedAt: 1_773_600_000_000, compressed: false))
            let archive = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.file("s.json")))) as? [String: Any])
            let envelope = ["appVersion", "counts", "exportedAt", "formatVersion"]
            let ordered = archive.keys.sorted { a, b in
                func rank(_ key: String) -> Int { envelope.contains(key) ? 2 : AndroidDialect.iosOnlyKeys.contains(key) ? 1 : 0 }
                return (rank(a), a) < (rank(b), b)
            }
            text = Self.object(try ordered.map { key in
                (key, String(decoding: try JSONSerialization.data(withJSONObject: archive[key]!, options: [.fragmentsAllowed]), as: UTF8.self))
            })
        }
        let path = dir.write("lookahead.json", text)
        let fromFile = try CLI.run(["inspect", path, "--json"])
        #expect(fromFile.exitCode == 0, "\(fromFile.stderr)")
        #expect(fromFile.json["dialect"] as? String == dialect)
        let fromPipe = try CLI.shell("cat lookahead.json | \"$PA\" inspect - --json", in: dir.path)
        #expect(fromPipe.exitCode == 0, "\(fromPipe.stderr)")
        #expect(fromPipe.stdout == fromFile.stdout)
        #expect(((fromPipe.json["tables"] as? [String: Any])?["measurements"] as? Int ?? 0) > 10_000)
    }

    @Test("the look ahead replays exactly what it crossed, in memory and spilled to disk")
    func replaySourceReplaysExactly() throws {
        let bytes = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let replay = ReplaySource(MemorySource(bytes), memoryLimit: 1 << 20)
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 70_001)
        func readSome(_ limit: Int) throws -> [UInt8] {
            var got: [UInt8] = []
            while got.count < limit {
                let n = try chunk.withUnsafeMutableBytes { try replay.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<min($0.count, limit - got.count)])) }
                if n == 0 { break }
                got += chunk[0..<n]
            }
            return got
        }
        out += try readSome(100_000)
        replay.record()
        let ahead = try readSome(2_500_000)
        #expect(ahead == Array(bytes[100_000..<2_600_000]))
        replay.replay()
        out += try readSome(Int.max)
        #expect(out == bytes)
    }
}

/// The default name of `export`: the app's prefix and minute, then `-2`, `-3` … when taken.
@Suite("Export names")
struct ExportNameTests {
    /// The stem of export's default name for a backup made at `date` under `TZ=UTC` (the
    /// tests' zone): `pulseloop-backup-<yyyy-MM-dd-HHmm>`.
    static func defaultStem(_ date: Date) -> String {
        let minute = DateFormatter()
        minute.locale = Locale(identifier: "en_US_POSIX")
        minute.timeZone = TimeZone(identifier: "UTC")
        minute.dateFormat = "yyyy-MM-dd-HHmm"
        return "pulseloop-backup-\(minute.string(from: date))"
    }

    @Test("two exports into one directory within a minute both succeed under the next free names, past names taken by others; nothing is replaced")
    func secondExportInTheSameMinute() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 2)
        try FileManager.default.createDirectory(atPath: dir.file("backups"), withIntermediateDirectories: false)
        // The minute may turn between the two exports: then both carry the bare name.
        let stems = [Date(), Date().addingTimeInterval(60)].map(Self.defaultStem)
        // Someone else's files under the names the export would take first: never touched.
        for stem in stems {
            dir.write("backups/\(stem).json.gz", "not ours")
            dir.write("backups/\(stem)-2.json.gz", "not ours either")
        }
        let first = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("backups")])
        let second = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("backups") + "/"])
        #expect(first.exitCode == 0, "\(first.stderr)")
        #expect(second.exitCode == 0, "\(second.stderr)")
        let paths = [first.stdout, second.stdout].map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(Set(paths).count == 2)
        for path in paths {
            let name = URL(fileURLWithPath: path).lastPathComponent
            #expect(stems.contains { name == "\($0)-3.json.gz" || name == "\($0)-4.json.gz" }, "\(name)")
            #expect(try CLI.run(["inspect", path]).exitCode == 0)
            #expect(StoreFixtures.mode(path) == 0o600)
        }
        for stem in stems {
            #expect(String(decoding: FileManager.default.contents(atPath: dir.file("backups/\(stem).json.gz"))!, as: UTF8.self) == "not ours")
            #expect(String(decoding: FileManager.default.contents(atPath: dir.file("backups/\(stem)-2.json.gz"))!, as: UTF8.self) == "not ours either")
        }
    }
}

@Suite("diff through a pipe")
struct DiffPipeTests {
    @Test("diff - FILE reads OLD from a pipe; diff - - is a usage error")
    func diffFromStandardInput() throws {
        let fromPipe = try CLI.shell("gunzip -c \"\(Repository.sampleFormat2)\" | \"$PA\" diff - \"\(Repository.sampleFormat2)\" --json --exit-code", in: NSTemporaryDirectory())
        #expect(fromPipe.exitCode == 0, "\(fromPipe.stderr)")
        #expect(fromPipe.json["identical"] as? Bool == true)
        let both = try CLI.shell("\"$PA\" diff - - < \"\(Repository.sampleFormat2)\"", in: NSTemporaryDirectory())
        #expect(both.exitCode == 64)
        #expect(both.stderr.contains("both be standard input"))
    }
}
