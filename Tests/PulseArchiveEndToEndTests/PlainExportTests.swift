import Foundation
import Testing
import PulseAge
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// `export --compression none` through the built binary (docs/cli.md, docs/backups.md): the
/// plain JSON the gzip archive inflates to, names that say which it is, every reader taking it,
/// `prune` ordering it, and the nightly restic job of docs/backups.md run as written.
@Suite("Plain exports and nightly backups")
struct PlainExportTests {
    @discardableResult
    static func sh(_ script: String, in dir: TemporaryDirectory, environment: [String: String] = [:], expectingSuccess: Bool = true,
                   sourceLocation: SourceLocation = #_sourceLocation) throws -> CLI.Result {
        try CLI.shell(script, environment: environment, in: dir.path, expectingSuccess: expectingSuccess, sourceLocation: sourceLocation)
    }

    static func bytes(_ path: String) -> [UInt8] { EncryptionCLITests.bytes(path) }

    /// The instant every export of these tests records.
    static let epoch = ["SOURCE_DATE_EPOCH": "1773600000"]

    /// A store and its gzip export at `epoch`.
    struct Fixture {
        let dir = TemporaryDirectory()

        init(days: Int = 6) throws {
            try StoreFixtures.demoStore(dir.file("store"), days: days)
            try sh("\"$PA\" export --store store -o gzip.json.gz -q", in: dir, environment: PlainExportTests.epoch)
        }
    }

    @Test("--compression none writes exactly the bytes the gzip export inflates to: to a file, to -, and under the default name in a directory")
    func plainIsTheInflatedGzip() throws {
        let f = try Fixture()
        try Self.sh("gzip -dc gzip.json.gz > inflated.json", in: f.dir)
        let inflated = Self.bytes(f.dir.file("inflated.json"))
        let report = try Self.sh("\"$PA\" export --store store --compression none -o plain.json -q --json", in: f.dir, environment: Self.epoch)
        #expect(report.json["compression"] as? String == "none", "\(report.stdout)")
        try Self.sh("\"$PA\" export --store store --compression none -o - -q > stream.json", in: f.dir, environment: Self.epoch)
        try Self.sh("mkdir backups && \"$PA\" export --store store --compression none -o backups -q > path.txt", in: f.dir, environment: Self.epoch)
        #expect(inflated.count > 10_000)
        #expect(Self.bytes(f.dir.file("plain.json")) == inflated)
        #expect(Self.bytes(f.dir.file("stream.json")) == inflated)
        let path = String(decoding: Self.bytes(f.dir.file("path.txt")), as: UTF8.self).trimmingCharacters(in: .newlines)
        let name = URL(fileURLWithPath: path).lastPathComponent
        #expect(name.hasPrefix("pulseloop-backup-") && name.hasSuffix(".json") && name.count == "pulseloop-backup-2026-03-15-1840.json".count, "\(name)")
        #expect(Self.bytes(f.dir.file(path)) == inflated)
        #expect(StoreFixtures.mode(f.dir.file(path)) == 0o600)
        // The file's time is the export's instant, what prune dates a plain backup by.
        let time = try FileManager.default.attributesOfItem(atPath: f.dir.file(path))[.modificationDate] as? Date
        #expect(time?.timeIntervalSince1970 == 1_773_600_000)
        // A second plain export of the same minute takes the suffix, as gzip ones do.
        let second = try Self.sh("\"$PA\" export --store store --compression none -o backups -q", in: f.dir, environment: Self.epoch)
        #expect(second.stdout.hasSuffix("-2.json\n"), "\(second.stdout)")
        // The version first, the fields that change every night last (docs/backups.md).
        let text = String(decoding: inflated, as: UTF8.self)
        #expect(text.hasPrefix(#"{"formatVersion":2,"appVersion":"pulse-archive "#))
        #expect(text.hasSuffix(#""exportedAt":"2026-03-15T18:40:00.000Z"}"#))
        #expect(text.range(of: #","counts":{"#)!.lowerBound > text.range(of: #""wearableLogs":["#)!.lowerBound)
    }

    @Test("inspect, verify, import and diff read the plain export from a file and from standard input")
    func readersTakeThePlainForm() throws {
        let f = try Fixture()
        try Self.sh("\"$PA\" export --store store --compression none -o plain.json -q", in: f.dir, environment: Self.epoch)
        for source in ["plain.json", "- < plain.json"] {
            let inspected = try Self.sh("\"$PA\" inspect \(source) --json", in: f.dir)
            #expect(inspected.json["compressed"] as? Bool == false, "\(source)")
            #expect(inspected.json["exportedAt"] as? String == "2026-03-15T18:40:00.000Z", "\(source)")
            #expect(inspected.json["formatVersion"] as? Int == 2)
            #expect((inspected.json["declaredCounts"] as? [String: Any])?["measurements"] != nil)
            let verified = try Self.sh("\"$PA\" verify \(source) --json", in: f.dir)
            #expect(verified.json["ok"] as? Bool == true, "\(source): \(verified.stdout)")
            // Both forms hold the same rows, settings, attachments and documents.
            #expect(try Self.sh("\"$PA\" diff gzip.json.gz \(source) --exit-code", in: f.dir).exitCode == 0)
        }
        try Self.sh("\"$PA\" import plain.json --store fromFile --no-backfill -q", in: f.dir)
        try Self.sh("cat plain.json | \"$PA\" import - --store fromPipe --no-backfill -q", in: f.dir)
        let original = try StoreSnapshot(store: f.dir.file("store"))
        #expect(try StoreSnapshot(store: f.dir.file("fromFile")).sameContent(as: original))
        #expect(try StoreSnapshot(store: f.dir.file("fromPipe")).sameContent(as: original))
    }

    @Test("names tell the truth: a gzip export's name ends .gz, a plain one's does not (before any .age); usage errors, exit 64, before any work")
    func namesTellTheTruth() throws {
        let f = try Fixture()
        let key = try AgeX25519Identity.generate().recipient.bech32
        let refused: [(String, String)] = [
            ("--compression none -o x.json.gz", "ends in .gz"),
            ("--compression none -o x.JSON.GZ", "ends in .gz"),
            ("-o x.json", "does not end in .gz"),
            // No extension and no such folder: a folder that is missing (a backup disk not
            // mounted) as likely as a file; said both ways, in both forms.
            ("--compression gzip -o x", "'-o x' is no folder here and names a file without an extension: to write into a folder, create it first (a trailing / says it is one: '-o x/'); to name the file, name it x.json.gz"),
            ("--compression none -o ./nodir", "to name the file, name it ./nodir.json"),
            ("-o sub/.hidden", "to name the file, name it sub/.hidden.json.gz"),
            ("-o x.json.age -r \(key)", "does not end in .gz"),
            ("--compression none -o x.json.gz.age -r \(key)", "ends in .gz"),
            // Another extension before .age claims what it says, as without .age (it took gzip).
            ("-o y.tar.age -r \(key)", "does not end in .gz"),
            ("--compression none -o x.zst", "ends in .zst, which promises compressed data"),
            ("--compression none -o x.TGZ.age -r \(key)", "ends in .tgz, which promises compressed data"),
            // An option given twice: the last value winning silently is refused.
            ("-o a.json.gz -o b.json.gz", "'--output' was given 2 times: give it once"),
            ("--compression none --compression gzip -o x.json", "'--compression' was given 2 times"),
            ("--compression zip -o x.json.gz", "must be gzip or none"),
            ("--compression none --rsyncable -o x.json", "--rsyncable shapes the gzip stream"),
            ("--compression none --threads 2 -o x.json", "--threads shapes the gzip stream"),
            // FAT, exFAT and Windows drop trailing dots: the name would not be the one checked.
            ("-o x.json.gz.", "'-o x.json.gz.' ends in a dot, which FAT and exFAT (USB sticks) and Windows drop from a name: name it x.json.gz"),
            ("--compression none -o x.json..", "ends in a dot, which FAT and exFAT (USB sticks) and Windows drop from a name: name it x.json"),
            ("-o sub/x.json.gz.age. -r \(key)", "name it sub/x.json.gz.age"),
            ("-o 'x.json.gz. '", "'-o x.json.gz. ' ends in a space, which Windows drops from a name and no listing shows: name it x.json.gz"),
        ]
        for (arguments, message) in refused {
            // A store that does not exist: the name is refused before the store is looked at.
            let result = try Self.sh("\"$PA\" export --store missing \(arguments)", in: f.dir, expectingSuccess: false)
            #expect(result.exitCode == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("Error: ") && result.stderr.contains(message) && result.stderr.contains("Usage:"), "\(arguments): \(result.stderr)")
        }
        // The same rule for every name a command creates: a folder of tables, a key file, a chart.
        for (command, message) in [("tables --store store -o out.", "'-o out.' ends in a dot"), ("tables --store store --format ndjson -o 'out '", "'-o out ' ends in a space"),
                                   ("keygen -o key.txt.", "'-o key.txt.' ends in a dot"), ("readiness --store store --svg chart.svg.", "'--svg chart.svg.' ends in a dot"),
                                   // A trailing slash only says it is a folder; $(…) drops a trailing line break.
                                   ("tables --store store -o 'tb.//'", "'-o tb.//' ends in a dot"), ("tables --store store -o 'tb /'", "ends in a space"),
                                   ("tables --store store -o \"$(printf 'tn\\n.')\"", "ends in a dot"), ("tables --store store -o \"$(printf 'tn\\t')\"", "ends in white space"),
                                   ("keygen -o \"$(printf 'k.txt\\342\\200\\250')\"", "ends in white space"), ("tables --store store -o \"$(printf 'tb\\302\\240')\"", "ends in white space"),
                                   // Invisible: zero width (a joiner too, which joins the character before it), a byte-order mark, U+180E.
                                   ("tables --store store -o \"$(printf 'x\\342\\200\\213')\"", "ends in an invisible character (U+200B), which no listing shows: name it x"),
                                   ("tables --store store -o \"$(printf 'x\\342\\200\\215')\"", "ends in an invisible character (U+200D)"),
                                   ("keygen -o \"$(printf 'k.txt\\357\\273\\277')\"", "ends in an invisible character (U+FEFF)"),
                                   ("readiness --store store --svg \"$(printf 'c.svg\\341\\240\\216')\"", "ends in an invisible character (U+180E)")] {
            let result = try Self.sh("\"$PA\" \(command)", in: f.dir, expectingSuccess: false)
            #expect(result.exitCode == 64 && result.stderr.hasPrefix("Error: ") && result.stderr.contains(message) && result.stderr.contains("Usage:"),
                    "\(command): exit \(result.exitCode) \(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.dir.path).sorted() == ["gzip.json.gz", "store"])
        // An empty folder that is there already is no name tables creates: it writes into it.
        try FileManager.default.createDirectory(atPath: f.dir.file("made."), withIntermediateDirectories: false)
        let into = try Self.sh("\"$PA\" tables --store store -o made. -q", in: f.dir, expectingSuccess: false)
        #expect(into.exitCode == 0 && FileManager.default.fileExists(atPath: f.dir.file("made./tables.json")), "\(into.stderr)")
        try FileManager.default.removeItem(atPath: f.dir.file("made."))
        // A trailing / names a folder: one that is not there is said so, without naming advice.
        for (output, reason) in [("nowhere/", "but there is no folder nowhere/: create it first"), ("gzip.json.gz/", "but gzip.json.gz is not one")] {
            let result = try Self.sh("\"$PA\" export --store store -o \(output)", in: f.dir, expectingSuccess: false)
            #expect(result.exitCode == 1 && result.stderr.contains("ends in /, so it names a folder, \(reason)") && !result.stderr.contains(".gz ("),
                    "\(output): \(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.dir.path).sorted() == ["gzip.json.gz", "store"])
        // A bare `.age` says nothing of the compression inside: both forms take it, as before
        // `--compression` existed.
        try Self.sh("\"$PA\" export --store store -o bare-gzip.age -r \(key) -q && \"$PA\" export --store store --compression none -o bare-plain.age -r \(key) -q", in: f.dir)
        #expect(FileManager.default.fileExists(atPath: f.dir.file("bare-gzip.age")) && FileManager.default.fileExists(atPath: f.dir.file("bare-plain.age")))
        // Encrypted plain JSON is `….json.age`: age -d gives the plain export, and our readers open it.
        try Self.sh("\"$PA\" keygen -o key.txt >/dev/null 2>&1 && \"$PA\" export --store store --compression none -o plain.json -q", in: f.dir, environment: Self.epoch)
        let recipient = try Self.sh("\"$PA\" keygen -y key.txt", in: f.dir).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try Self.sh("mkdir sealed && \"$PA\" export --store store --compression none -o sealed -r \(recipient) -q > path.txt", in: f.dir, environment: Self.epoch)
        let path = String(decoding: Self.bytes(f.dir.file("path.txt")), as: UTF8.self).trimmingCharacters(in: .newlines)
        #expect(path.hasSuffix(".json.age") && !path.contains(".gz"), "\(path)")
        try Self.sh("age -d -i key.txt -o opened.json '\(path)'", in: f.dir)
        #expect(Self.bytes(f.dir.file("opened.json")) == Self.bytes(f.dir.file("plain.json")))
        let inspected = try Self.sh("\"$PA\" inspect '\(path)' -i key.txt --json", in: f.dir)
        #expect(inspected.json["encrypted"] as? Bool == true && inspected.json["compressed"] as? Bool == false, "\(inspected.stdout)")
        try Self.sh("\"$PA\" verify '\(path)' -i key.txt -q && \"$PA\" diff gzip.json.gz '\(path)' -i key.txt --exit-code >/dev/null", in: f.dir)
        try Self.sh("cat '\(path)' | \"$PA\" verify - -i key.txt -q && \"$PA\" import '\(path)' -i key.txt --store fromSealed --no-backfill -q", in: f.dir)
        #expect(try StoreSnapshot(store: f.dir.file("fromSealed")).sameContent(as: try StoreSnapshot(store: f.dir.file("store"))))
    }

    @Test("the path export and tables print, taken by a script, opens what they wrote whatever the folder is called: as it is on a pipe")
    func printedPathsOpen() throws {
        let f = try Fixture()
        for folder in ["bk\u{200B}", "rlo\u{202E}x", "ctl\u{1}y"] {
            try FileManager.default.createDirectory(atPath: f.dir.file(folder), withIntermediateDirectories: false)
            let export = try CLI.run(["export", "--store", f.dir.file("store"), "-o", f.dir.file(folder), "-q"])
            let path = export.stdout.trimmingCharacters(in: .newlines)
            #expect(export.exitCode == 0 && path.hasPrefix(f.dir.file(folder) + "/pulseloop-backup-") && FileManager.default.fileExists(atPath: path),
                    "\(folder.debugDescription): \(export.stdout.debugDescription) \(export.stderr)")
            let tables = try CLI.run(["tables", "--store", f.dir.file("store"), "-o", f.dir.file(folder) + "/t", "-q"])
            #expect(tables.exitCode == 0 && tables.stdout == f.dir.file(folder) + "/t\n", "\(folder.debugDescription): \(tables.stdout.debugDescription) \(tables.stderr)")
        }
    }

    @Test("a store holding a UUID field the readers refuse is refused by every form of export: exit 1, named, no file, no snapshot")
    func everyFormRefusesWhatTheReadersRefuse() throws {
        let f = try Fixture(days: 2)
        try Self.sh("sqlite3 store/pulse.sqlite \"UPDATE measurements SET id = 'not-a-uuid' WHERE rowid = (SELECT min(rowid) FROM measurements)\"", in: f.dir)
        let key = try AgeX25519Identity.generate().recipient.bech32
        try Self.sh("mkdir out", in: f.dir)
        for arguments in ["-o out/", "-o out/g.json.gz", "--rsyncable -o out/r.json.gz", "--threads 1 -o out/t.json.gz",
                          "--compression none -o out/p.json", "-o out/e.json.gz.age -r \(key)", "--compression none -o out/e.json.age -r \(key)",
                          "-o - > /dev/null", "--compression none -o - > /dev/null", "-o - -r \(key) > /dev/null"] {
            let result = try Self.sh("\"$PA\" export --store store \(arguments)", in: f.dir, expectingSuccess: false)
            #expect(result.exitCode == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(#"measurements[0].id: cannot be exported: the store holds "not-a-uuid" where a UUID belongs"#), "\(arguments): \(result.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: f.dir.file("out")).isEmpty, "\(arguments)")
        }
        // The nightly restic job of backups.md fails and keeps no snapshot of it.
        try Capability.require(Self.resticAvailable, "restic (Debian's package; .ci/run installs it)")
        let bin = f.dir.file("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: bin + "/pulse-archive", withDestinationPath: CLI.executable)
        let environment = ["RESTIC_REPOSITORY": f.dir.file("repo"), "RESTIC_PASSWORD": "nightly", "PATH": bin + ":/usr/bin:/bin",
                           "RESTIC_CACHE_DIR": f.dir.file("cache"), "STORE": "store"]
        try Self.sh("restic init -q", in: f.dir, environment: environment)
        f.dir.write("nightly.sh", try Self.resticJob())
        let job = try Self.sh("/bin/bash nightly.sh", in: f.dir, environment: environment, expectingSuccess: false)
        #expect(job.exitCode == 1 && job.stderr.contains("where a UUID belongs"), "\(job.stderr)")
        let snapshots = try Self.sh("restic snapshots --json", in: f.dir, environment: environment).stdout
        #expect((try JSONSerialization.jsonObject(with: Data(snapshots.utf8)) as? [Any])?.count == 0, "\(snapshots)")
    }

    @Test("prune takes plain .json backups as candidates, dated by their file time, and reads a plain newest all the way")
    func prunePlainBackups() throws {
        let f = try Fixture(days: 2)
        try Self.sh("mkdir backups", in: f.dir)
        // A plain backup of this minute and the next, -7: a new one takes -8 whatever its
        // form (unless the minute after next has come meanwhile).
        for stem in PruneOrderTests.stemsOfThisMinuteAndNext() {
            f.dir.write("backups/\(stem)-7.json", "{}")
        }
        let sequenced = try Self.sh("\"$PA\" export --store store -o backups -q", in: f.dir).stdout
        #expect(sequenced.hasSuffix("-8.json.gz\n"), "\(sequenced)")
        for file in try FileManager.default.contentsOfDirectory(atPath: f.dir.file("backups")) {
            try FileManager.default.removeItem(atPath: f.dir.file("backups/" + file))
        }
        // In the order made (a second apart): gzip, plain, encrypted plain, gzip.
        let key = try AgeX25519Identity.generate().recipient.bech32
        var names: [String] = []
        for (index, extra) in ["", "--compression none", "--compression none -r \(key)", ""].enumerated() {
            let made = try Self.sh("\"$PA\" export --store store -o backups -q \(extra)", in: f.dir, environment: ["SOURCE_DATE_EPOCH": "\(Int(Date().timeIntervalSince1970) + index)"])
            names.append(URL(fileURLWithPath: made.stdout.trimmingCharacters(in: .newlines)).lastPathComponent)
        }
        #expect(names[0].hasSuffix(".json.gz") && names[1].hasSuffix(".json") && names[2].hasSuffix(".json.age") && names[3].hasSuffix(".json.gz"), "\(names)")
        // The plain ones as the newest: remove the last gzip one.
        try FileManager.default.removeItem(atPath: f.dir.file("backups/" + names[3]))
        let dry = try CLI.run(["prune", f.dir.file("backups"), "--keep-last", "2", "--dry-run", "--json"])
        #expect(dry.exitCode == 0, "\(dry.stderr)")
        let kept = dry.json["kept"] as? [[String: Any]] ?? []
        #expect(kept.compactMap { $0["file"] as? String } == [names[2], names[1]])
        #expect(kept.compactMap { $0["madeAtFrom"] as? String } == ["file-time", "file-time"])
        #expect(dry.json["removed"] as? [String] == [names[0]])
        #expect(dry.json["ignored"] as? [String] == [])
        // A plain newest that is cut short refuses the prune: nothing is removed.
        try FileManager.default.removeItem(atPath: f.dir.file("backups/" + names[2]))
        let plain = f.dir.file("backups/" + names[1])
        let whole = Self.bytes(plain)
        let modified = try FileManager.default.attributesOfItem(atPath: plain)[.modificationDate] as! Date
        try Data(whole.prefix(whole.count / 2)).write(to: URL(fileURLWithPath: plain))
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: plain)
        let refused = try CLI.run(["prune", f.dir.file("backups"), "--keep-last", "1"])
        #expect(refused.exitCode == 1)
        #expect(refused.stderr.contains("refusing to prune: the newest archive") && refused.stderr.contains(names[1]), "\(refused.stderr)")
        // With --json, the refusal is the failure object on stdout too (it printed nothing).
        let refusedJSON = try CLI.run(["prune", f.dir.file("backups"), "--keep-last", "1", "--json"])
        #expect(refusedJSON.exitCode == 1 && refusedJSON.json["ok"] as? Bool == false
                && (refusedJSON.json["error"] as? String ?? "").contains("refusing to prune: the newest archive"), "\(refusedJSON.stdout)")
        #expect(FileManager.default.fileExists(atPath: f.dir.file("backups/" + names[0])))
        // Whole again, it is read, kept, and the gzip one before it goes.
        try Data(whole).write(to: URL(fileURLWithPath: plain))
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: plain)
        let pruned = try CLI.run(["prune", f.dir.file("backups"), "--keep-last", "1", "--json"])
        #expect(pruned.exitCode == 0, "\(pruned.stderr)")
        #expect(pruned.json["removed"] as? [String] == [names[0]])
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.dir.file("backups")) == [names[1]])
    }

    /// The CI job of docs/backups.md, as written there (the `sh` block after "## A CI job"),
    /// with its folder set to `directory`.
    static func ciJob(checking directory: String) throws -> String {
        let doc = try String(contentsOfFile: Repository.root + "/docs/backups.md", encoding: .utf8)
        let section = try #require(doc.components(separatedBy: "## A CI job").dropFirst().first)
        let job = try #require(section.components(separatedBy: "```sh\n").dropFirst().first?.components(separatedBy: "```").first)
        #expect(job.contains("dir=/backups/pulse\n"))
        return job.replacingOccurrences(of: "dir=/backups/pulse\n", with: "dir=\(directory)\n")
    }

    @Test("the CI job of backups.md, as written: no backup fails it; it verifies the newest of any form and diffs it with the one before; a lost row fails it; the key file goes, and a key.txt of the user's stays")
    func ciJobAsWritten() throws {
        let f = try Fixture()
        let bin = f.dir.file("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: bin + "/pulse-archive", withDestinationPath: CLI.executable)
        try Self.sh("mkdir backups && \"$PA\" keygen -o identity.txt > recipient.txt", in: f.dir)
        f.dir.write("job.sh", try Self.ciJob(checking: f.dir.file("backups")))
        // The user's own identity where the job runs: the job must neither overwrite nor remove it.
        f.dir.write("key.txt", "AGE-SECRET-KEY-OF-THE-USER\n")
        let scratch = f.dir.file("tmp")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)
        let environment = ["PATH": bin + ":/usr/bin:/bin", "TMPDIR": scratch, "PULSE_AGE_IDENTITY": String(decoding: Self.bytes(f.dir.file("identity.txt")), as: UTF8.self)]
        let job = { try Self.sh("sh job.sh", in: f.dir, environment: environment, expectingSuccess: false) }
        let none = try job()
        #expect(none.exitCode == 1 && none.stderr.contains("no backup in"), "\(none.stderr)")
        // Made a night apart (export sets the file's time to SOURCE_DATE_EPOCH): gzip, then plain.
        try Self.sh("\"$PA\" export --store store -o backups/ -R recipient.txt -q", in: f.dir, environment: ["SOURCE_DATE_EPOCH": "1773600000"])
        let one = try job()
        #expect(one.exitCode == 0 && !one.stdout.contains("Comparing"), "\(one.stderr)")
        try Self.sh("\"$PA\" export --store store -o backups/ -R recipient.txt --compression none -q", in: f.dir, environment: ["SOURCE_DATE_EPOCH": "1773686400"])
        let two = try job()
        #expect(two.exitCode == 0 && two.stdout.contains("plain JSON") && two.stdout.contains("diff: no differences"), "\(two.stdout)\(two.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(Self.bytes(f.dir.file("verify.json")))) as? [String: Any]
        #expect(report?["ok"] as? Bool == true)
        // A row gone from the newest: diff --fail-on removed fails the job.
        try Self.sh("sqlite3 store/pulse.sqlite 'DELETE FROM measurements WHERE rowid = (SELECT min(rowid) FROM measurements)'", in: f.dir)
        try Self.sh("\"$PA\" export --store store -o backups/ -R recipient.txt -q", in: f.dir, environment: ["SOURCE_DATE_EPOCH": "1773772800"])
        let lost = try job()
        #expect(lost.exitCode == 1 && lost.stdout.contains("-1"), "\(lost.stdout)\(lost.stderr)")
        #expect(String(decoding: Self.bytes(f.dir.file("key.txt")), as: UTF8.self) == "AGE-SECRET-KEY-OF-THE-USER\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty, "the job left its key file in $TMPDIR")
    }

    static let resticAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/restic")

    /// The restic job of docs/backups.md, as written there (its one `bash` block), run with
    /// `$STORE` and the repository set.
    static func resticJob() throws -> String {
        let doc = try String(contentsOfFile: Repository.root + "/docs/backups.md", encoding: .utf8)
        let job = try #require(doc.components(separatedBy: "```bash\n").dropFirst().first?.components(separatedBy: "```").first)
        #expect(job.contains("restic backup --stdin --stdin-filename pulseloop.json") && job.contains("pipefail"))
        return job
    }

    @Test("restic backs up two nightly plain exports through --stdin; the second restores byte-identical; a failed export leaves no snapshot",
          .enabled(if: Capability.enabled(resticAvailable)))
    func resticNightly() throws {
        try Capability.require(Self.resticAvailable, "restic (Debian's package; .ci/run installs it)")
        let f = try Fixture(days: 6)
        try StoreFixtures.demoStore(f.dir.file("store2"), days: 7)
        let bin = f.dir.file("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: bin + "/pulse-archive", withDestinationPath: CLI.executable)
        let environment = ["RESTIC_REPOSITORY": f.dir.file("repo"), "RESTIC_PASSWORD": "nightly", "PATH": bin + ":/usr/bin:/bin",
                           "RESTIC_CACHE_DIR": f.dir.file("cache")].merging(Self.epoch) { $1 }
        try Self.sh("restic init -q", in: f.dir, environment: environment)
        f.dir.write("nightly.sh", try Self.resticJob())
        for store in ["store", "store2"] {
            try Self.sh("/bin/bash nightly.sh", in: f.dir, environment: environment.merging(["STORE": store]) { $1 })
        }
        try Self.sh("\"$PA\" export --store store2 --compression none -o night2.json -q", in: f.dir, environment: Self.epoch)
        try Self.sh("restic dump -q latest pulseloop.json > restored.json", in: f.dir, environment: environment)
        #expect(Self.bytes(f.dir.file("restored.json")) == Self.bytes(f.dir.file("night2.json")))
        #expect(Self.bytes(f.dir.file("restored.json")).count > 10_000)
        try Self.sh("restic dump -q latest pulseloop.json | \"$PA\" verify - -q", in: f.dir, environment: environment)
        let snapshots = { try Self.sh("restic snapshots --json", in: f.dir, environment: environment).stdout }
        #expect((try JSONSerialization.jsonObject(with: Data(try snapshots().utf8)) as? [Any])?.count == 2)
        // An export that fails before writing: restic refuses the empty stream ("snapshot is
        // empty"), and the job exits 1.
        let empty = try Self.sh("/bin/bash nightly.sh", in: f.dir, environment: environment.merging(["STORE": "missing"]) { $1 },
                                expectingSuccess: false)
        #expect(empty.exitCode == 1 && empty.stderr.contains("there is no store at missing"), "\(empty.stderr)")
        #expect((try JSONSerialization.jsonObject(with: Data(try snapshots().utf8)) as? [Any])?.count == 2)
        // Run without STORE (cron's bare environment): it says so, and no snapshot is made.
        let unset = try Self.sh("env -u STORE /bin/bash nightly.sh", in: f.dir, environment: environment, expectingSuccess: false)
        #expect(unset.exitCode != 0 && unset.stderr.contains("set STORE to the store folder"), "\(unset.stderr)")
        #expect((try JSONSerialization.jsonObject(with: Data(try snapshots().utf8)) as? [Any])?.count == 2)
        // One that fails after part of the archive went out (a kill while it is copied to the
        // pipe): restic 0.14 keeps the part as a snapshot, which the job forgets.
        let cut = f.dir.file("cut")
        try FileManager.default.createDirectory(atPath: cut, withIntermediateDirectories: false)
        f.dir.write("cut/pulse-archive", "#!/bin/sh\n\(CLI.executable) \"$@\" | head -c 20000\nexit 1\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: f.dir.file("cut/pulse-archive"))
        let partial = try Self.sh("/bin/bash nightly.sh", in: f.dir, environment: environment.merging(["STORE": "store", "PATH": cut + ":/usr/bin:/bin"]) { $1 },
                                  expectingSuccess: false)
        #expect(partial.exitCode == 1, "\(partial.stderr)")
        #expect(partial.stdout.contains("1 snapshots have been removed"), "\(partial.stdout)")
        #expect((try JSONSerialization.jsonObject(with: Data(try snapshots().utf8)) as? [Any])?.count == 2)
        try Self.sh("restic dump -q latest pulseloop.json | cmp - night2.json", in: f.dir, environment: environment)
    }
}
