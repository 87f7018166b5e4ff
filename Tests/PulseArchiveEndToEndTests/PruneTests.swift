import Foundation
import Testing
import PulseAge
import PulseArchive
import PulseSystem
@testable import PulseBackups
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// `prune` through the built binary, against directories of real archives (copies of the
/// sample) under names of the scheme. Every expected kept set below was worked out by hand from
/// the calendar, not by running the code; the reasoning is beside each case.
@Suite struct PruneTests {
    static let prefix = "pulseloop-backup-"

    /// `pulseloop-backup-<stamp>.json.gz`.
    static func name(_ stamp: String) -> String { prefix + stamp + ".json.gz" }

    /// A directory holding a copy of the sample archive under each of `stamps`' names.
    static func directory(_ stamps: [String]) throws -> TemporaryDirectory {
        let dir = TemporaryDirectory()
        for stamp in stamps {
            try FileManager.default.copyItem(atPath: Repository.sampleFormat2, toPath: dir.file(name(stamp)))
        }
        return dir
    }

    /// Every entry: name, kind, size and modification time, and a link's target.
    static func listing(_ path: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted().map { entry in
            let attributes = try FileManager.default.attributesOfItem(atPath: path + "/" + entry)
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path + "/" + entry)) ?? ""
            return "\(entry) \(attributes[.type] ?? "") \(attributes[.size] ?? "") \(attributes[.modificationDate] ?? "") \(target)"
        }
    }

    struct Outcome {
        let kept: [String: [String]]
        /// In the report's order (newest first).
        let keptOrder: [String]
        let removed: [String]
        let ignored: [String]
        let dryRun: Bool?
        let left: Set<String>
    }

    /// Runs `prune DIR args --json` and reads its report and what is left in DIR.
    static func prune(_ dir: TemporaryDirectory, _ arguments: [String]) throws -> Outcome {
        let result = try CLI.run(["prune", dir.path] + arguments + ["--json"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let json = result.json
        let keptList = json["kept"] as? [[String: Any]] ?? []
        var kept: [String: [String]] = [:]
        for entry in keptList { kept[entry["file"] as? String ?? "?"] = entry["reasons"] as? [String] ?? [] }
        return Outcome(kept: kept, keptOrder: keptList.map { $0["file"] as? String ?? "?" },
                       removed: json["removed"] as? [String] ?? [], ignored: json["ignored"] as? [String] ?? [],
                       dryRun: json["dryRun"] as? Bool,
                       left: Set(try FileManager.default.contentsOfDirectory(atPath: dir.path)))
    }

    /// Checks a run against the expected kept files (stamp → reasons) and removed files.
    static func check(_ stamps: [String], _ arguments: [String], kept: [(String, [String])], removed: [String]) throws {
        let dir = try directory(stamps)
        let outcome = try prune(dir, arguments)
        #expect(outcome.keptOrder == kept.map { name($0.0) }, "\(arguments)")
        for (stamp, reasons) in kept { #expect(outcome.kept[name(stamp)] == reasons, "\(stamp) \(arguments)") }
        #expect(outcome.removed == removed.map(name), "\(arguments)")
        #expect(outcome.left == Set(kept.map { name($0.0) }), "\(arguments)")
        #expect(outcome.dryRun == false)
    }

    @Test("what a killed export left (a backup's partial file, its process gone) is removed by prune and reported as abandoned, the dry run saying the same; a live writer's partial and one of another name are ignored and left")
    func abandonedPartials() throws {
        let dir = try Self.directory(["2026-03-01-1200", "2026-03-02-1200"])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        let dead = "." + Self.name("2026-03-03-1200") + ".partial-pulse-archive-\(process.processIdentifier)"
        let live = "." + Self.name("2026-03-04-1200") + ".partial-pulse-archive-\(getpid())"
        // A user's file that only looks like a partial one (the review: it was removed), and
        // one with our marker but no backup's name (the next review: removed, unreported).
        let usersOwn = ".report.pdf.partial-\(process.processIdentifier)"
        let notABackup = ".notes.partial-pulse-archive-\(process.processIdentifier)"
        // A pid no writer writes so (a sign, a leading zero): someone else's name.
        let signed = "." + Self.name("2026-03-06-1200") + ".partial-pulse-archive-+\(process.processIdentifier)"
        let padded = "." + Self.name("2026-03-07-1200") + ".partial-pulse-archive-00\(process.processIdentifier)"
        for entry in [dead, live, usersOwn, notABackup, signed, padded] { dir.write(entry, "half an archive") }
        // A folder with a partial file's name and a dead pid: not an export's (it writes files);
        // left, and listed as ignored, never reported removed (it was, every run).
        let folder = "." + Self.name("2026-03-05-1200") + ".partial-pulse-archive-\(process.processIdentifier)"
        try FileManager.default.createDirectory(atPath: dir.file(folder), withIntermediateDirectories: false)
        dir.write(folder + "/data", "precious")
        let dryRun = try CLI.run(["prune", dir.path, "--keep-last", "5", "--dry-run", "--json"])
        #expect((dryRun.json["abandoned"] as? [String]) == [dead] && !((dryRun.json["ignored"] as? [String]) ?? []).contains(dead), "\(dryRun.stdout)")
        let dry = try Self.prune(dir, ["--keep-last", "5", "--dry-run"])
        #expect(dry.left.contains(dead) && dry.left.contains(live))
        let text = try CLI.run(["prune", dir.path, "--keep-last", "5", "--dry-run"])
        #expect(text.stdout.contains("would remove") && text.stdout.contains("a partial file an export killed while writing left"), "\(text.stdout)")
        let result = try CLI.run(["prune", dir.path, "--keep-last", "5", "--json"])
        #expect((result.json["abandoned"] as? [String]) == [dead], "\(result.stdout)")
        let outcome = try Self.prune(dir, ["--keep-last", "5"])
        #expect(!outcome.left.contains(dead), "a dead export's partial file was left")
        #expect(!outcome.ignored.contains(dead) && outcome.ignored.contains(live) && outcome.ignored.contains(notABackup), "\(outcome.ignored)")
        #expect(outcome.left.contains(live) && outcome.removed.isEmpty)
        #expect(outcome.left.contains(usersOwn) && outcome.left.contains(notABackup) && outcome.left.contains(signed) && outcome.left.contains(padded),
                "a file this tool did not make was removed")
        #expect(FileManager.default.fileExists(atPath: dir.file(folder + "/data")) && outcome.ignored.contains(folder), "\(outcome.ignored)")
    }

    @Test("a newest archive whose name says otherwise than its contents (a .age not encrypted, a .gz of plain JSON) is kept and checked, with a warning and newestMisnamed")
    func misnamedNewest() throws {
        for (name, source, found) in [(Self.prefix + "2026-03-02-1200.json.gz.age", Repository.sampleFormat2, "not encrypted"),
                                      (Self.prefix + "2026-03-02-1200.json.gz", Repository.sampleFormat1, "plain JSON")] {
            let dir = try Self.directory(["2026-03-01-1200"])
            try FileManager.default.copyItem(atPath: source, toPath: dir.file(name))
            let result = try CLI.run(["prune", dir.path, "--keep-last", "1", "--dry-run", "--json"])
            #expect(result.exitCode == 0 && result.json["newestMisnamed"] as? String == found && result.json["newestCheck"] as? String == "full",
                    "\(name): \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains("warning: the newest archive \"\(name)\" is \(found), which its name does not say"), "\(result.stderr)")
        }
        let sound = try Self.directory(["2026-03-01-1200", "2026-03-02-1200"])
        let result = try CLI.run(["prune", sound.path, "--keep-last", "1", "--dry-run", "--json"])
        #expect(result.json.keys.contains("newestMisnamed") && result.json["newestMisnamed"] is NSNull && !result.stderr.contains("warning"), "\(result.stdout)")
    }

    @Test("a name with escaped characters keeps the report's columns in line")
    func escapedNamesKeepColumns() throws {
        let dir = try Self.directory(["2026-03-01-1200"])
        for name in ["esc\u{1B}[31mR", "rlo\u{202E}abc", "lrm\u{200E}zw\u{200B}", "plain"] { dir.write(name, "x") }
        let result = try CLI.run(["prune", dir.path, "--keep-last", "1", "--dry-run"])
        let rows = result.stdout.split(separator: "\n").filter { $0.contains("ignored  ") }
        let columns = Set(rows.map { row in row.distance(from: row.startIndex, to: row.range(of: "not a backup")!.lowerBound) })
        #expect(rows.count == 4 && columns.count == 1, "\(result.stdout)")
        #expect(!result.stdout.unicodeScalars.contains { [0x200E, 0x200B, 0x202E].contains($0.value) }, "\(result.stdout)")
        #expect(result.stdout.contains(#"esc\u{1B}[31mR"#) && !result.stdout.unicodeScalars.contains("\u{1B}"), "\(result.stdout)")
    }

    @Test func hours() throws {
        // Newest first: 1300-2, 1300, 1130, 1015, 1000, 0959, 0930, 0905. Hour 13's newest is
        // 1300-2 (the -2 was written after 1300), hour 11's is 1130, hour 10's is 1015: three
        // hours kept; hour 12 has no archive and is not counted.
        try Self.check(["2021-03-10-0905", "2021-03-10-0930", "2021-03-10-0959", "2021-03-10-1000",
                        "2021-03-10-1015", "2021-03-10-1130", "2021-03-10-1300", "2021-03-10-1300-2"],
                       ["--keep-hourly", "3"],
                       kept: [("2021-03-10-1300-2", ["hourly"]), ("2021-03-10-1130", ["hourly"]), ("2021-03-10-1015", ["hourly"])],
                       removed: ["2021-03-10-1300", "2021-03-10-1000", "2021-03-10-0959", "2021-03-10-0930", "2021-03-10-0905"])
    }

    @Test func daysAndLast() throws {
        // Newest first: 03-05 0800, 03-04 1200, 03-04 0000, 03-02 2359, 03-02 0100, 03-01 2300.
        // last 2: the first two. daily 3: 03-05 → 0800, 03-04 → 1200, (no 03-03), 03-02 → 2359.
        try Self.check(["2021-03-01-2300", "2021-03-02-0100", "2021-03-02-2359", "2021-03-04-0000", "2021-03-04-1200", "2021-03-05-0800"],
                       ["--keep-daily", "3", "--keep-last", "2"],
                       kept: [("2021-03-05-0800", ["last", "daily"]), ("2021-03-04-1200", ["last", "daily"]), ("2021-03-02-2359", ["daily"])],
                       removed: ["2021-03-04-0000", "2021-03-02-0100", "2021-03-01-2300"])
    }

    /// 2020-12-31 is a Thursday, so ISO week 53 of 2020 runs Monday 2020-12-28 to Sunday
    /// 2021-01-03; week 1 of 2021 is Monday 01-04 to Sunday 01-10; week 2 starts 01-11;
    /// 2020-12-27 is the Sunday ending week 52.
    static let weekStamps = ["2020-12-27-0300", "2020-12-28-0300", "2020-12-31-0300", "2021-01-01-0300",
                             "2021-01-03-0300", "2021-01-04-0300", "2021-01-10-0300", "2021-01-11-0300"]

    @Test func isoWeeksAcrossTheYearBoundary() throws {
        // Newest first: 01-11 (2021-W2), 01-10 and 01-04 (2021-W1), 01-03, 01-01, 12-31, 12-28
        // (all 2020-W53), 12-27 (2020-W52). Weekly 3 keeps the newest of W2, W1, W53: 01-11,
        // 01-10, 01-03.
        try Self.check(Self.weekStamps, ["--keep-weekly", "3"],
                       kept: [("2021-01-11-0300", ["weekly"]), ("2021-01-10-0300", ["weekly"]), ("2021-01-03-0300", ["weekly"])],
                       removed: ["2021-01-04-0300", "2021-01-01-0300", "2020-12-31-0300", "2020-12-28-0300", "2020-12-27-0300"])
        // A fourth week reaches 2020-W52: 12-27. Weeks numbered within the calendar year would
        // have split W53 at New Year and kept 12-31 instead; Sunday-first weeks would have kept
        // 01-04 and not 01-10.
        try Self.check(Self.weekStamps, ["--keep-weekly", "4"],
                       kept: [("2021-01-11-0300", ["weekly"]), ("2021-01-10-0300", ["weekly"]),
                              ("2021-01-03-0300", ["weekly"]), ("2020-12-27-0300", ["weekly"])],
                       removed: ["2021-01-04-0300", "2021-01-01-0300", "2020-12-31-0300", "2020-12-28-0300"])
    }

    @Test func monthsAndYears() throws {
        // Newest first: 2021-01-31, 2020-12-15, 2020-12-01, 2020-11-30, 2020-01-01, 2019-12-31,
        // 2019-06-15. monthly 2: 2021-01 → 01-31, 2020-12 → 12-15. yearly 3: 2021 → 01-31,
        // 2020 → 12-15, 2019 → 12-31.
        try Self.check(["2019-06-15-0000", "2019-12-31-2359", "2020-01-01-0000", "2020-11-30-1200",
                        "2020-12-01-0000", "2020-12-15-0000", "2021-01-31-2300"],
                       ["--keep-monthly", "2", "--keep-yearly", "3"],
                       kept: [("2021-01-31-2300", ["monthly", "yearly"]), ("2020-12-15-0000", ["monthly", "yearly"]),
                              ("2019-12-31-2359", ["yearly"])],
                       removed: ["2020-12-01-0000", "2020-11-30-1200", "2020-01-01-0000", "2019-06-15-0000"])
    }

    @Test func sequenceSuffixes() throws {
        // In one minute -10 is newer than -9 (numbers, not text), -9 than -2, -2 than none.
        let stamps = ["2021-05-05-1200", "2021-05-05-1200-2", "2021-05-05-1200-10", "2021-05-05-1200-9", "2021-05-05-1159-30"]
        try Self.check(stamps, ["--keep-last", "2"],
                       kept: [("2021-05-05-1200-10", ["last"]), ("2021-05-05-1200-9", ["last"])],
                       removed: ["2021-05-05-1200-2", "2021-05-05-1200", "2021-05-05-1159-30"])
        // Hour 12's newest is 1200-10; hour 11's is 1159-30 (its -30 is no time).
        try Self.check(stamps, ["--keep-hourly", "2"],
                       kept: [("2021-05-05-1200-10", ["hourly"]), ("2021-05-05-1159-30", ["hourly"])],
                       removed: ["2021-05-05-1200-9", "2021-05-05-1200-2", "2021-05-05-1200"])
    }

    @Test func ignoredEntriesAreNeverTouched() throws {
        let dir = try Self.directory(["2021-05-05-1200", "2021-05-04-1200"])
        let outside = TemporaryDirectory()
        try FileManager.default.copyItem(atPath: Repository.sampleFormat2, toPath: outside.file("target.json.gz"))
        let ignoredFiles = [
            "notes.txt", Self.prefix + "2021-05-05-1300.gz", Self.prefix + "2021-02-30-1200.json.gz",
            Self.prefix + "2021-05-05-2400.json.gz", Self.prefix + "2021-05-05-1260.json.gz",
            Self.prefix + "2021-05-05-1300-1.json.gz", Self.prefix + "2021-05-05-1300-02.json.gz",
            Self.prefix + "2021-05-05-1300-0.json.gz", Self.prefix + "2021-05-05-1300-x.json.gz",
            Self.prefix + "2021-5-05-1300.json.gz", Self.prefix + "2021-05-05-1300.json.gz.bak",
            "PULSELOOP-BACKUP-2021-05-05-1300.json.gz", Self.prefix + "2021-05-05-1300.age", Self.prefix + "2021-05-05-1300.json.gz.json",
        ]
        for file in ignoredFiles {
            try FileManager.default.copyItem(atPath: Repository.sampleFormat2, toPath: dir.file(file))
        }
        // A directory and a link named like the newest backups are not candidates either.
        try FileManager.default.createDirectory(atPath: dir.file(Self.name("2031-01-01-0000")), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: dir.file(Self.name("2031-01-02-0000")), withDestinationPath: outside.file("target.json.gz"))
        let before = try Self.listing(dir.path)
        // The text says why without calling the directory or the link a regular file.
        let text = try CLI.run(["prune", dir.path, "--keep-last", "1", "--dry-run"])
        let directoryRow = try #require(text.stdout.split(separator: "\n").first { $0.contains(Self.name("2031-01-01-0000")) }, "\(text.stdout)")
        #expect(directoryRow.hasPrefix("  ignored") && directoryRow.hasSuffix("not a backup (only a regular file named by the scheme is one)"), "\(directoryRow)")
        let outcome = try Self.prune(dir, ["--keep-last", "1"])
        #expect(outcome.keptOrder == [Self.name("2021-05-05-1200")])
        #expect(outcome.removed == [Self.name("2021-05-04-1200")])
        let expectedIgnored = (ignoredFiles + [Self.name("2031-01-01-0000"), Self.name("2031-01-02-0000")]).sorted()
        #expect(outcome.ignored == expectedIgnored)
        #expect(try Self.listing(dir.path) == before.filter { !$0.hasPrefix(Self.name("2021-05-04-1200")) })
        #expect(FileManager.default.fileExists(atPath: outside.file("target.json.gz")))
    }

    @Test("prune interrupted after its first removal says how many went and that prune again removes the rest; it removes no more")
    func interruptedPruneSaysWhatWent() throws {
        let dir = try Self.directory(["2021-05-01-1200", "2021-05-02-1200", "2021-05-03-1200", "2021-05-04-1200"])
        let stopped = try KillPoints.expectStopped(["prune", dir.path, "--keep-last", "1"], at: "prune.removed:1", with: SIGINT)
        #expect(stopped.stderr.contains("Error: interrupted (SIGINT) after its commit: 1 of the 3 backups the policy removes is gone; prune again to remove the rest"),
                "\(stopped.stderr)")
        // Newest first: the oldest three were to go, and only the first of them went.
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(left == ["2021-05-01-1200", "2021-05-02-1200", "2021-05-04-1200"].map(Self.name), "\(left)")
        let finished = try Self.prune(dir, ["--keep-last", "1"])
        #expect(finished.removed.count == 2 && finished.keptOrder == [Self.name("2021-05-04-1200")])
    }

    @Test func dryRunChangesNothing() throws {
        let dir = try Self.directory(["2021-03-01-2300", "2021-03-02-0100", "2021-03-02-2359", "2021-03-04-0000", "2021-03-05-0800"])
        dir.write("notes.txt", "keep me")
        let before = try Self.listing(dir.path)
        let result = try CLI.run(["prune", dir.path, "--keep-daily", "2", "--dry-run", "--json"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.json["dryRun"] as? Bool == true)
        // The plan: daily 2 keeps 03-05 and 03-04; the rest would go.
        #expect(result.json["removed"] as? [String] == ["2021-03-02-2359", "2021-03-02-0100", "2021-03-01-2300"].map(Self.name))
        #expect(try Self.listing(dir.path) == before)
        let text = try CLI.run(["prune", dir.path, "--keep-daily", "2", "-n"])
        #expect(text.exitCode == 0)
        #expect(text.stdout.contains("would remove  " + Self.name("2021-03-01-2300")))
        #expect(text.stdout.contains("dry run: nothing was removed"))
        #expect(try Self.listing(dir.path) == before)
    }

    @Test func theNewestIsKeptWhateverTheRule() throws {
        // One archive a year: each rule at 1 keeps exactly the newest and removes the others.
        for option in ["--keep-last", "--keep-hourly", "--keep-daily", "--keep-weekly", "--keep-monthly", "--keep-yearly"] {
            let dir = try Self.directory(["2019-07-01-0000", "2020-07-01-0000", "2021-07-01-0000"])
            let outcome = try Self.prune(dir, [option, "1"])
            #expect(outcome.left == [Self.name("2021-07-01-0000")], "\(option)")
            #expect(outcome.kept[Self.name("2021-07-01-0000")] == [String(option.dropFirst(7))], "\(option)")
        }
        // A directory with a single archive: nothing to remove.
        let single = try Self.directory(["2021-07-01-0000"])
        let outcome = try Self.prune(single, ["--keep-yearly", "5"])
        #expect(outcome.left == [Self.name("2021-07-01-0000")])
        #expect(outcome.removed.isEmpty)
    }

    @Test("a backup made after now (a clock a year ahead) is kept outside the policy with a warning: the backups made since stay the newest, and --keep-last 1 no longer removes each the night it is made")
    func aBackupFromTheFuture() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 3)
        try FileManager.default.createDirectory(atPath: dir.file("b"), withIntermediateDirectories: false)
        // Name, gzip header and file time agree, as when the clock itself was wrong.
        let future = Self.name("2100-01-01-0000")
        let ahead = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("b/" + future), "-q"], environment: ["SOURCE_DATE_EPOCH": "4102444800", "TZ": "UTC"])
        #expect(ahead.exitCode == 0, "\(ahead.stderr)")
        let tonight = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("b"), "-q"])
        #expect(tonight.exitCode == 0, "\(tonight.stderr)")
        let made = URL(fileURLWithPath: tonight.stdout.trimmingCharacters(in: .newlines)).lastPathComponent
        try FileManager.default.copyItem(atPath: Repository.sampleFormat2, toPath: dir.file("b/" + Self.name("2021-07-01-0000")))
        let result = try CLI.run(["prune", dir.file("b"), "--keep-last", "1", "--json"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let kept = (result.json["kept"] as? [[String: Any]] ?? []).map { ($0["file"] as? String ?? "?", $0["reasons"] as? [String] ?? []) }
        #expect(kept.map(\.0) == [future, made] && kept.map(\.1) == [["made after now"], ["last"]], "\(result.stdout)")
        #expect(result.json["future"] as? [String] == [future], "\(result.stdout)")
        #expect(result.json["removed"] as? [String] == [Self.name("2021-07-01-0000")], "\(result.stdout)")
        #expect(result.stderr.contains("warning: \"\(future)\" was made after now (2100-01-01T00:00:00.000Z, by its gzip header): kept, and left out of the policy"), "\(result.stderr)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir.file("b"))) == [future, made])
    }

    @Test func aBrokenNewestArchiveRefusesThePrune() throws {
        let dir = try Self.directory(["2021-01-01-0000", "2021-01-02-0000"])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Repository.sampleFormat2))
        dir.write(Self.name("2021-01-03-0000"), bytes.prefix(bytes.count - 100))
        let before = try Self.listing(dir.path)
        for arguments in [["--keep-last", "1"], ["--keep-last", "1", "--json"], ["--keep-daily", "1", "--dry-run"]] {
            let result = try CLI.run(["prune", dir.path] + arguments)
            #expect(result.exitCode == 1, "\(arguments)")
            // Nothing on stdout but, with --json, the failure object (cli.md).
            #expect(arguments.contains("--json") ? result.json["ok"] as? Bool == false : result.stdout.isEmpty, "\(arguments): \(result.stdout)")
            #expect(result.stderr.contains(Self.name("2021-01-03-0000")), "\(result.stderr)")
            #expect(result.stderr.contains("cut short"), "\(result.stderr)")
            #expect(result.stderr.contains("nothing was removed"), "\(result.stderr)")
            #expect(try Self.listing(dir.path) == before)
        }
    }

    @Test("a newest archive the machine could not check (no temporary directory to stage it in) is not called unreadable: nothing is removed, and the archive is not blamed (review h96)")
    func theMachineFailingTheCheckIsNotTheArchive() throws {
        // Documents, which the check stages in $TMPDIR (the sample archive has none).
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("store"), days: 2)
        for stamp in ["2021-01-01-0000", "2021-01-02-0000"] {
            _ = try StoreFixtures.export(dir.file("store"), to: dir.file(Self.name(stamp)))
        }
        try FileManager.default.removeItem(atPath: dir.file("store"))
        let before = try Self.listing(dir.path)
        let result = try CLI.run(["prune", dir.path, "--keep-last", "1"], environment: ["TMPDIR": dir.file("no-such-folder")])
        #expect(result.exitCode == 1, "\(result.stderr)")
        #expect(result.stderr.contains("the newest archive \(dir.path)/\(Self.name("2021-01-02-0000")) could not be checked, for no fault of its own ("),
                "\(result.stderr)")
        #expect(result.stderr.contains("no-such-folder") && result.stderr.contains("nothing was removed"), "\(result.stderr)")
        #expect(!result.stderr.contains("does not read") && !result.stderr.contains("Replace it"), "\(result.stderr)")
        #expect(try Self.listing(dir.path) == before)
    }

    @Test("scrypt out of memory (a passphrase archive under ulimit -v 200 MB; work factor 18 needs 256 MiB) is the machine's failure: prune does not blame the newest archive, verify could not finish (review h97)")
    func scryptOutOfMemoryIsTheMachines() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("store"), days: 2)
        try FileManager.default.createDirectory(atPath: dir.file("b"), withIntermediateDirectories: false)
        let passphrase = ["PULSE_ARCHIVE_PASSPHRASE": "the right one"]
        for stamp in ["2021-01-01-0000", "2021-01-02-0000"] {
            try CLI.shell("\"$PA\" export --store store -q --passphrase -o b/\(Self.name(stamp)).age", environment: passphrase, in: dir.path, expectingSuccess: true)
        }
        let before = try Self.listing(dir.file("b"))
        let newest = "b/\(Self.name("2021-01-02-0000")).age"
        let prune = try CLI.shell("ulimit -v 200000 && \"$PA\" prune b --keep-last 1", environment: passphrase, in: dir.path)
        #expect(prune.exitCode == 1 && prune.stderr.contains("\(newest) could not be checked, for no fault of its own ("), "\(prune.stderr)")
        #expect(prune.stderr.contains("which needs 256 MiB of memory") && !prune.stderr.contains("does not read"), "\(prune.stderr)")
        #expect(try Self.listing(dir.file("b")) == before)
        let verify = try CLI.shell("ulimit -v 200000 && \"$PA\" verify \(newest) --json", environment: passphrase, in: dir.path)
        #expect(verify.exitCode == 1 && (verify.json["error"] as? String ?? "").hasPrefix("verify could not finish, for no fault of the archive"), "\(verify.stdout)")
        // With the memory it needs, the same archive is sound.
        let sound = try CLI.shell("\"$PA\" verify \(newest) --json", environment: passphrase, in: dir.path)
        #expect(sound.exitCode == 0 && sound.json["ok"] as? Bool == true, "\(sound.stdout) \(sound.stderr)")
    }

    @Test func anEncryptedNewestIsCheckedByItsAgeHeader() throws {
        let dir = try Self.directory(["2021-01-01-0000", "2021-01-02-0000"])
        let age = Self.prefix + "2021-01-03-0000.json.gz.age"
        dir.write(age, "age-encryption.org/v2\n-> X25519 abc\n")
        let before = try Self.listing(dir.path)
        let refused = try CLI.run(["prune", dir.path, "--keep-last", "1"])
        #expect(refused.exitCode == 1)
        #expect(refused.stderr.contains(age) && refused.stderr.contains("version"), "\(refused.stderr)")
        #expect(try Self.listing(dir.path) == before)
        // A header that starts right but does not parse is refused as well. (The listing is
        // taken again: rewriting the file changes its modification time, to the second, which
        // made this check fail whenever a second boundary fell between the two writes.)
        dir.write(age, "age-encryption.org/v1\n-> X25519 abc\n")
        let rewritten = try Self.listing(dir.path)
        #expect(try CLI.run(["prune", dir.path, "--keep-last", "1"]).exitCode == 1)
        #expect(try Self.listing(dir.path) == rewritten)
        // A real encrypted archive, no key given: its header parses, and that is all prune can check.
        try FileManager.default.removeItem(atPath: dir.file(age))
        let sink = FileSink(try SystemFile.createExclusive(dir.file(age)))
        let sealed = try AgeEncryptingSink(output: sink, recipients: [try AgeX25519Identity.generate().recipient])
        try Array(try Data(contentsOf: URL(fileURLWithPath: Repository.sampleFormat2))).withUnsafeBytes { try sealed.write($0) }
        try sealed.finish()
        let outcome = try Self.prune(dir, ["--keep-last", "1"])
        #expect(outcome.keptOrder == [age])
        #expect(outcome.left == [age])
    }

    @Test func oddNamesAreShownQuotedInTheText() throws {
        let dir = try Self.directory(["2021-01-01-0000"])
        dir.write("fake\nkeep  pulseloop-backup-2099-01-01-0000.json.gz", "x")
        dir.write("trailing.json.gz ", "x")
        let result = try CLI.run(["prune", dir.path, "--keep-last", "1"])
        #expect(result.exitCode == 0)
        #expect(result.stdout.contains("\"fake\\nkeep  pulseloop-backup-2099-01-01-0000.json.gz\""), "\(result.stdout)")
        #expect(result.stdout.contains("\"trailing.json.gz \""), "\(result.stdout)")
        #expect(!result.stdout.contains("\nkeep  pulseloop-backup-2099"))
    }

    @Test func usageErrorsAndAMissingDirectory() throws {
        let dir = try Self.directory(["2021-01-01-0000", "2021-01-02-0000"])
        let before = try Self.listing(dir.path)
        for arguments in [[], ["--keep-last", "0"], ["--keep-daily", "0", "--keep-weekly", "0"], ["--keep-daily", "-1"],
                          ["--keep-daily", "abc"], ["--keep-daily", "1.5"], ["--keep-daily"], ["--keep-everything", "1"],
                          // Twice: the last value winning kept one day of thirty, silently.
                          ["--keep-daily", "30", "--keep-daily", "1"]] {
            let result = try CLI.run(["prune", dir.path] + arguments)
            #expect(result.exitCode == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("Usage: pulse-archive prune"), "\(arguments)")
            #expect(result.stdout.isEmpty)
        }
        #expect(try CLI.run(["prune", dir.path]).stderr.contains("at least one --keep-last"))
        #expect(try Self.listing(dir.path) == before)
        let missing = try CLI.run(["prune", dir.file("nowhere"), "--keep-last", "1"])
        #expect(missing.exitCode == 1)
        #expect(missing.stderr.contains("Error: there is no directory \(dir.file("nowhere"))"), "\(missing.stderr)")
        let file = try CLI.run(["prune", dir.file(Self.name("2021-01-01-0000")), "--keep-last", "1"])
        #expect(file.exitCode == 1)
        #expect(file.stderr.contains("is not a directory"), "\(file.stderr)")
    }

    @Test func jsonKeysAndTextReport() throws {
        let dir = try Self.directory(["2021-01-01-0000", "2021-01-02-0000"])
        dir.write("notes.txt", "x")
        let result = try CLI.run(["prune", dir.path, "--keep-last", "1", "--dry-run", "--json"])
        #expect(Set(result.json.keys) == ["kept", "removed", "ignored", "abandoned", "future", "dryRun", "skipped", "failed", "newestCheck", "newestMisnamed"])
        #expect(result.json["ignored"] as? [String] == ["notes.txt"])
        let text = try CLI.run(["prune", dir.path, "--keep-last", "1"])
        #expect(text.exitCode == 0)
        #expect(text.stdout.contains("keep     " + Self.name("2021-01-02-0000") + "  last"), "\(text.stdout)")
        #expect(text.stdout.contains("removed  " + Self.name("2021-01-01-0000")), "\(text.stdout)")
        #expect(text.stdout.contains("1 kept, 1 removed, 1 ignored"), "\(text.stdout)")
    }

    @Test("a removal the system refuses is reported as failed, exit 1, the rest of the report intact",
          .enabled(if: Capability.enabled(ReadOnly.isAvailable)))
    func aRefusedRemovalFails() throws {
        try Capability.require(ReadOnly.isAvailable, "a read-only mount or an immutable directory (root: mount, or chattr +i)")
        let dir = try Self.directory(["2021-01-01-0000", "2021-01-02-0000", "2021-01-03-0000"])
        let before = try Self.listing(dir.path)
        let result = try ReadOnly.run(["prune", dir.path, "--keep-last", "1", "--json"], readOnly: dir.path)
        #expect(result.exitCode == 1, "\(result.stderr)")
        #expect(result.stderr.contains("cannot remove"), "\(result.stderr)")
        let failed = result.json["failed"] as? [[String: Any]] ?? []
        #expect(failed.compactMap { $0["file"] as? String } == [Self.name("2021-01-02-0000"), Self.name("2021-01-01-0000")])
        #expect(result.json["removed"] as? [String] == [])
        #expect((result.json["kept"] as? [[String: Any]])?.count == 1)
        #expect(try Self.listing(dir.path) == before)
    }

    /// The removal step itself, for what a run cannot stage between its listing and its
    /// unlink: an entry gone meanwhile, one replaced by a link or a directory.
    @Test func removalOfExactEntries() throws {
        let dir = try Self.directory(["2021-01-01-0000", "2021-01-02-0000", "2021-01-03-0000", "2021-01-04-0000"])
        let outside = TemporaryDirectory()
        outside.write("target", "not ours")
        let listing = try BackupDirectory(dir.path)
        #expect(listing.archives.count == 4)
        try FileManager.default.removeItem(atPath: dir.file(Self.name("2021-01-01-0000")))
        #expect(listing.remove(Self.name("2021-01-01-0000")) == .vanished)
        try FileManager.default.removeItem(atPath: dir.file(Self.name("2021-01-02-0000")))
        try FileManager.default.createSymbolicLink(atPath: dir.file(Self.name("2021-01-02-0000")), withDestinationPath: outside.file("target"))
        #expect(listing.remove(Self.name("2021-01-02-0000")) == .notRegularFile)
        #expect(FileManager.default.fileExists(atPath: outside.file("target")))
        try FileManager.default.removeItem(atPath: dir.file(Self.name("2021-01-03-0000")))
        try FileManager.default.createDirectory(atPath: dir.file(Self.name("2021-01-03-0000")), withIntermediateDirectories: false)
        #expect(listing.remove(Self.name("2021-01-03-0000")) == .notRegularFile)
        #expect(listing.remove(Self.name("2021-01-04-0000")) == .removed)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == [Self.name("2021-01-02-0000"), Self.name("2021-01-03-0000")])
    }
}
