import Foundation
import Testing
import PulseAge
import PulseArchive
import PulseSystem
@testable import PulseBackups
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// `prune` orders backups by when each was made, not by the local-time digits of its name
/// (docs/backups.md): real exports through the built binary, under the `TZ` a journey or a cron
/// job gives them. Each export's instant is the real clock's, so the exports of a test are in
/// the order they ran; the names' zones are picked 25 hours apart, so their digits sort the
/// other way whatever the clock says.
@Suite struct PruneOrderTests {
    /// A small store and a directory of backups.
    struct Fixture {
        let dir = TemporaryDirectory()
        var store: String { dir.file("store") }
        var backups: String { dir.file("backups") }

        init() throws {
            try StoreFixtures.demoStore(dir.file("store"), days: 2)
            try FileManager.default.createDirectory(atPath: dir.file("backups"), withIntermediateDirectories: false)
        }

        /// `export -o backups` under `zone`; returns the file's name.
        @discardableResult
        func export(zone: String, _ extra: [String] = [], environment: [String: String] = [:]) throws -> String {
            let result = try CLI.run(["export", "--store", store, "-o", backups, "--quiet"] + extra,
                                     environment: environment.merging(["TZ": zone]) { $1 })
            #expect(result.exitCode == 0, "\(result.stderr)")
            return URL(fileURLWithPath: result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)).lastPathComponent
        }

        func prune(_ arguments: [String], zone: String = "UTC", in directory: String? = nil) throws -> CLI.Result {
            let result = try CLI.run(["prune", directory ?? backups, "--json"] + arguments, environment: ["TZ": zone])
            #expect(result.exitCode == 0, "\(result.stderr)")
            return result
        }

        func left(_ directory: String? = nil) throws -> Set<String> {
            Set(try FileManager.default.contentsOfDirectory(atPath: directory ?? backups))
        }
    }

    /// The default names' stems (`pulseloop-backup-<yyyy-MM-dd-HHmm>`) of this minute and the
    /// next in UTC, the tests' `TZ`: an export run now falls in one of them.
    static func stemsOfThisMinuteAndNext() -> [String] {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd-HHmm"
        let now = Date()
        return [now, now.addingTimeInterval(60)].map { "pulseloop-backup-" + formatter.string(from: $0) }
    }

    static func kept(_ result: CLI.Result) -> [String] {
        (result.json["kept"] as? [[String: Any]] ?? []).compactMap { $0["file"] as? String }
    }

    static func sources(_ result: CLI.Result) -> [String] {
        (result.json["kept"] as? [[String: Any]] ?? []).compactMap { $0["madeAtFrom"] as? String }
    }

    @Test("after a journey east to west, --keep-last 1 keeps the backup made last, plain and encrypted")
    func timeZoneChangeBetweenExports() throws {
        for encrypted in [false, true] {
            let f = try Fixture()
            let key = encrypted ? ["-r", try AgeX25519Identity.generate().recipient.bech32] : []
            // Made first at UTC+14, its name reads 25 hours later than the next one's at UTC−11.
            let first = try f.export(zone: "Pacific/Kiritimati", key)
            let last = try f.export(zone: "Pacific/Pago_Pago", key)
            #expect(last.utf8.lexicographicallyPrecedes(first.utf8), "the names' digits sort the other way: \(first) \(last)")
            let result = try f.prune(["--keep-last", "1"])
            #expect(Self.kept(result) == [last], "\(result.stdout)")
            #expect(Self.sources(result) == [encrypted ? "file-time" : "gzip-header"])
            #expect(try f.left() == [last])
        }
    }

    @Test("cron in UTC, a shell in Los Angeles, prune in either: the newest is the one made last, and prune's zone moves no period")
    func cronAndShellInDifferentZones() throws {
        let f = try Fixture()
        let cron = try f.export(zone: "UTC")
        // Made later, its name reads 8 hours earlier.
        let shell = try f.export(zone: "America/Los_Angeles")
        var plans: [String] = []
        for zone in ["UTC", "America/Los_Angeles", "Pacific/Kiritimati"] {
            let planned = try f.prune(["--keep-last", "1", "--dry-run"], zone: zone)
            #expect(Self.kept(planned) == [shell], "\(zone): \(planned.stdout)")
            #expect(planned.json["removed"] as? [String] == [cron], "\(zone)")
            plans.append(try f.prune(["--keep-daily", "1", "--keep-hourly", "2", "--dry-run"], zone: zone).stdout)
        }
        #expect(Set(plans).count == 1, "\(plans)")
        let pruned = try f.prune(["--keep-last", "1"], zone: "UTC")
        #expect(Self.kept(pruned) == [shell])
        #expect(try f.left() == [shell])
    }

    @Test("a period is counted once: with names of two zones interleaved (Kiritimati and Pago Pago, a day apart), --keep-daily 7 keeps the newest backup of each of the 7 newest days, where counting each change of day kept 3 days")
    func periodsCountedOnce() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 2)
        try FileManager.default.createDirectory(atPath: dir.file("d"), withIntermediateDirectories: false)
        let hour = 3_600, noonNovember20 = 1_795_176_000
        var made: [(epoch: Int, zone: String)] = (0..<6).map { (noonNovember20 + $0 * 24 * hour, "UTC") }
        for step in 0..<6 { made.append((noonNovember20 + 6 * 24 * hour - 2 * hour + step * hour, step % 2 == 0 ? "Pacific/Kiritimati" : "Pacific/Pago_Pago")) }
        var names: [String] = []
        for (epoch, zone) in made {
            // Named as export names a backup made then in that zone (export's own name is now's).
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: zone)
            formatter.dateFormat = "yyyy-MM-dd-HHmm"
            let name = "pulseloop-backup-\(formatter.string(from: Date(timeIntervalSince1970: TimeInterval(epoch)))).json.gz"
            let result = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("d/" + name), "-q"], environment: ["SOURCE_DATE_EPOCH": String(epoch), "TZ": zone])
            #expect(result.exitCode == 0, "\(result.stderr)")
            names.append(name)
        }
        // Days by name: 20…25 (UTC), then 27, 26, 27, 26, 27, 26 (Kiritimati is UTC+14, Pago Pago UTC−11).
        #expect(names.map { String($0.dropFirst("pulseloop-backup-2026-11-".count).prefix(2)) } == ["20", "21", "22", "23", "24", "25", "27", "26", "27", "26", "27", "26"], "\(names)")
        let planned = try CLI.run(["prune", dir.file("d"), "--keep-daily", "7", "--dry-run", "--json"], environment: ["TZ": "UTC"])
        // The newest of day 26 (made last) and of day 27, then one of each of 25…21: only the
        // 20th's and the older ones of 26 and 27 go.
        #expect(Set(Self.kept(planned)) == Set([names[11], names[10]] + names[1...5]), "\(planned.stdout)")
        #expect(Set(planned.json["removed"] as? [String] ?? []) == Set([names[0]] + names[6...9]), "\(planned.stdout)")
    }

    @Test("an export of a backup under a SOURCE_DATE_EPOCH more than five minutes from now warns that prune dates it by that time; not within five minutes, not to standard output, not under another name, not when no clock could show that time with the name's minute (prune dates it by its name then)")
    func sourceDateEpochWarning() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 2)
        try FileManager.default.createDirectory(atPath: dir.file("d"), withIntermediateDirectories: false)
        let now = Int(Date().timeIntervalSince1970)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd-HHmm"
        // A name of the minute it records (UTC), three days from now.
        let inThreeDays = "pulseloop-backup-\(formatter.string(from: Date(timeIntervalSince1970: TimeInterval(now + 3 * 86_400)))).json.gz"
        for (epoch, output, warns) in [(now - 3_600, dir.file("d"), true), (now + 3 * 86_400, dir.file("d/" + inThreeDays), true),
                                       (now - 60, dir.file("d"), false), (now - 3_600, dir.file("d/reproducible.json.gz"), false), (now - 3_600, "-", false),
                                       // Named by now's minute, recording the last second of 9999, or 1970.
                                       (253_402_300_799, dir.file("d"), false), (0, dir.file("d"), false),
                                       (now + 3 * 86_400, dir.file("d/pulseloop-backup-2026-01-01-0000.json.gz"), false)] {
            let result = try CLI.run(["export", "--store", dir.file("s"), "-o", output, "-q"], environment: ["SOURCE_DATE_EPOCH": String(epoch)])
            #expect(result.exitCode == 0, "\(result.stderr)")
            let warned = result.stderr.contains("warning: SOURCE_DATE_EPOCH sets the time this backup records to ")
            #expect(warned == warns, "\(output) at \(epoch - now) s: \(result.stderr)")
            if warns {
                #expect(result.stderr.contains(epoch < now ? "60 minutes before now: prune dates backups by that time, so among the others this one counts as made then"
                                                          : "3 days after now: prune dates backups by that time, so until then it keeps this one outside its policy"), "\(result.stderr)")
            }
        }
    }

    @Test("a copy that lost the files' times is still ordered by the gzip header's time")
    func copiedFilesKeepTheirOrder() throws {
        let f = try Fixture()
        // Exports a second apart (SOURCE_DATE_EPOCH sets the instant they record): two made in
        // one second and copied would have nothing left to order them by.
        // Tonga (UTC+13), not Kiritimati (+14): at the world's last zone a name's minute begins
        // exactly when the instants that can carry it do, so when the minute turned between
        // `now` and the export's naming, the recorded time fell just outside and did not count.
        let now = Int(Date().timeIntervalSince1970)
        let first = try f.export(zone: "Pacific/Tongatapu", environment: ["SOURCE_DATE_EPOCH": "\(now)"])
        let last = try f.export(zone: "Pacific/Pago_Pago", environment: ["SOURCE_DATE_EPOCH": "\(now + 1)"])
        // Copied newest first, without -p: the older backup gets the newer file time.
        let copy = f.dir.file("copy")
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: false)
        for name in [last, first] {
            try Data(contentsOf: URL(fileURLWithPath: f.backups + "/" + name)).write(to: URL(fileURLWithPath: copy + "/" + name))
        }
        let result = try f.prune(["--keep-last", "1"], in: copy)
        #expect(Self.kept(result) == [last], "\(result.stdout)")
        #expect(try f.left(copy) == [last])
    }

    @Test("export records its instant in the gzip header's MTIME and as the file's time (SOURCE_DATE_EPOCH when set)")
    func exportRecordsItsInstant() throws {
        let f = try Fixture()
        let name = try f.export(zone: "UTC", environment: ["SOURCE_DATE_EPOCH": "1773600000"])
        let path = f.backups + "/" + name
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(8))
        #expect(bytes[4..<8].reversed().reduce(0) { $0 << 8 | Int($1) } == 1_773_600_000)
        let modified = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        #expect(modified?.timeIntervalSince1970 == 1_773_600_000)
        // The encrypted one shows its file time.
        let sealed = try f.export(zone: "UTC", ["-r", try AgeX25519Identity.generate().recipient.bech32],
                                  environment: ["SOURCE_DATE_EPOCH": "1773600000"])
        let sealedTime = try FileManager.default.attributesOfItem(atPath: f.backups + "/" + sealed)[.modificationDate] as? Date
        #expect(sealedTime?.timeIntervalSince1970 == 1_773_600_000)
    }

    @Test("a name prune freed is never handed to a newer backup of the same minute: export takes a suffix past every one there")
    func pruneThenExportInOneMinute() throws {
        let f = try Fixture()
        // This minute's and the next's names, as two exports and a prune of the base name
        // leave them: whichever minute the export falls in, -2 is there and the base name free.
        for stem in Self.stemsOfThisMinuteAndNext() {
            try FileManager.default.copyItem(atPath: Repository.sampleFormat2, toPath: f.backups + "/" + stem + "-2.json.gz")
        }
        let made = try f.export(zone: "UTC")
        #expect(made.hasSuffix("-3.json.gz"), "\(made)")
        // An encrypted one goes past the plain ones of its minute too (one sequence per minute).
        let sealed = try f.export(zone: "UTC", ["-r", try AgeX25519Identity.generate().recipient.bech32])
        try Self.expectLast(sealed, in: try f.left())

        // The whole story in one directory: export, export, prune, export.
        let g = try Fixture()
        _ = try g.export(zone: "UTC")
        _ = try g.export(zone: "UTC")
        _ = try g.prune(["--keep-last", "1"])
        let third = try g.export(zone: "UTC")
        try Self.expectLast(third, in: try g.left())
        let last = try g.prune(["--keep-last", "1"])
        #expect(Self.kept(last) == [third])
    }

    @Test("export refuses a suffix past 9 digits rather than write a name no later export could go past")
    func lastSuffix() throws {
        let f = try Fixture()
        for stem in Self.stemsOfThisMinuteAndNext() {
            #expect(FileManager.default.createFile(atPath: f.backups + "/" + stem + "-999999999.json", contents: Data()))
        }
        let result = try CLI.run(["export", "--store", f.store, "-o", f.backups, "--quiet"])
        #expect(result.exitCode == 1 && result.stderr.contains("with the highest suffix export writes (-999999999) or a longer one, so no next name is left"), "\(result.stdout)\(result.stderr)")
        #expect(try f.left().count == 2)
    }

    @Test("without a key, an .age newest cut anywhere (after its header, in its nonce, at a chunk's end, inside a chunk) or grown refuses the prune: its header records its length; a complete one passes")
    func headerOnlyEncryptedNewest() throws {
        let f = try Fixture()
        let older = "pulseloop-backup-2021-01-01-0000.json.gz"
        try FileManager.default.copyItem(atPath: Repository.sampleFormat2, toPath: f.backups + "/" + older)
        // A real encrypted archive of more than one chunk, made in memory.
        let identity = try AgeX25519Identity.generate()
        let complete = f.dir.file("complete.age")
        let sealed = try AgeEncryptingSink(output: FileSink(try SystemFile.createExclusive(complete)), recipients: [identity.recipient])
        var plain = Array(try Data(contentsOf: URL(fileURLWithPath: Repository.sampleFormat2)))
        while plain.count < 3 * 65_536 { plain += plain }
        try plain.withUnsafeBytes { try sealed.write($0) }
        try sealed.finish()
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: complete)))
        let headerEnd = try #require(Self.headerLength(bytes))
        let newest = "pulseloop-backup-2021-01-02-0000.json.gz.age"
        let cuts: [(Int, String)] = [
            (headerEnd, "right after the age header"),
            (headerEnd + 7, "inside the payload's nonce"),
            (headerEnd + 16, "without any chunk"),
            (headerEnd + 16 + 65_552 + 10, "no more than a tag"),
            (headerEnd + 16 + 65_552 + 16, "no more than a tag"),
        ]
        for (length, message) in cuts {
            #expect(FileManager.default.createFile(atPath: f.backups + "/" + newest, contents: Data(bytes.prefix(length))))
            let result = try CLI.run(["prune", f.backups, "--keep-last", "1"], environment: ["TZ": "UTC"])
            #expect(result.exitCode == 1, "\(length): \(result.stdout)")
            #expect(result.stderr.contains("nothing was removed") && result.stderr.contains(message), "\(length): \(result.stderr)")
            #expect(try f.left() == [older, newest])
        }
        // Cuts whose length a complete file could have (exactly at a chunk's end, or inside a
        // chunk: a shorter last chunk) and a byte appended: the header records the length, so
        // each is refused too. Cut points drawn with a seed, printed.
        var generator = SeededRandom.fromEnvironment("cut points")
        let seed = generator.seed
        let lengths = [headerEnd + 16 + 65_552, headerEnd + 16 + 2 * 65_552, bytes.count - 1]
            + (0..<12).map { _ in Int.random(in: (headerEnd + 16 + 17)..<(bytes.count - 1), using: &generator) }
        for length in lengths {
            #expect(FileManager.default.createFile(atPath: f.backups + "/" + newest, contents: Data(bytes.prefix(length))))
            let result = try CLI.run(["prune", f.backups, "--keep-last", "1"], environment: ["TZ": "UTC"])
            #expect(result.exitCode == 1 && result.stderr.contains("records \(bytes.count - headerEnd): it was cut short"),
                    "seed \(seed), cut at \(length) of \(bytes.count): \(result.stderr)")
            #expect(try f.left() == [older, newest], "seed \(seed), cut at \(length)")
        }
        FileManager.default.createFile(atPath: f.backups + "/" + newest, contents: Data(bytes + [0]))
        let appended = try CLI.run(["prune", f.backups, "--keep-last", "1"], environment: ["TZ": "UTC"])
        #expect(appended.exitCode == 1 && appended.stderr.contains("bytes were added after its end"), "\(appended.stderr)")
        // The whole file passes.
        FileManager.default.createFile(atPath: f.backups + "/" + newest, contents: Data(bytes))
        let result = try f.prune(["--keep-last", "1"])
        #expect(result.json["newestCheck"] as? String == "header")
        #expect(try f.left() == [newest])
    }

    @Test("without a key, an .age newest whose header records no length (age's own, a passphrase's) refuses the prune, whole or not; with the key it is read and the prune goes on")
    func encryptedNewestWithoutALengthNeedsTheKey() throws {
        let f = try Fixture()
        let older = "pulseloop-backup-2021-01-01-0000.json.gz"
        try FileManager.default.copyItem(atPath: Repository.sampleFormat2, toPath: f.backups + "/" + older)
        // Encrypted by the real age: a header of its recipient stanza alone.
        let newest = "pulseloop-backup-2021-01-02-0000.json.gz.age"
        try CLI.shell("key=$(\"$PA\" keygen -o key.txt) && age -e -r \"$key\" -o backups/\(newest) backups/\(older)", in: f.dir.path)
        let refused = try CLI.run(["prune", f.backups, "--keep-last", "1"], environment: ["TZ": "UTC"])
        #expect(refused.exitCode == 1 && refused.stderr.contains("its header records no length (encrypted by another program")
                && refused.stderr.contains("nothing was removed"), "\(refused.stderr)")
        #expect(try f.left() == [older, newest])
        let opened = try f.prune(["--keep-last", "1", "-i", f.dir.file("key.txt")])
        #expect(opened.json["newestCheck"] as? String == "full")
        #expect(try f.left() == [newest])
        // Ours with a passphrase: an scrypt stanza stands alone, so no length either.
        let sealed = "pulseloop-backup-2021-01-03-0000.json.gz.age"
        try CLI.shell("PULSE_ARCHIVE_PASSPHRASE=secret \"$PA\" export --store store -o backups/\(sealed) --passphrase --quiet", in: f.dir.path)
        let noPassphrase = try CLI.run(["prune", f.backups, "--keep-last", "1"], environment: ["TZ": "UTC"])
        #expect(noPassphrase.exitCode == 1 && noPassphrase.stderr.contains("(encrypted with a passphrase"), "\(noPassphrase.stderr)")
        #expect(try f.left() == [newest, sealed])
        let withPassphrase = try CLI.run(["prune", f.backups, "--keep-last", "1", "--json"], environment: ["TZ": "UTC", "PULSE_ARCHIVE_PASSPHRASE": "secret"])
        #expect(withPassphrase.exitCode == 0 && withPassphrase.json["newestCheck"] as? String == "full", "\(withPassphrase.stderr)")
        #expect(try f.left() == [sealed])
    }

    @Test("within FAT's 2-second step, or the minute of a backup dated by its name, the names decide: a -2 .age made after a .json.gz but dated before it is the newer; further apart the times decide")
    func coarseFileTimes() throws {
        let gzip = try #require(BackupName("pulseloop-backup-2026-12-03-1503.json.gz"))
        let sealed = try #require(BackupName("pulseloop-backup-2026-12-03-1503-2.json.gz.age"))
        let plain = try #require(BackupName("pulseloop-backup-2026-12-03-1503-2.json"))
        let second = try #require(ArchiveDate.parse("2026-12-03T15:03:31.000Z"))
        // The review's stick: the gzip header says :31 exactly, FAT floored the .age's :31.4 to :30.
        let first = Backup(name: gzip, madeAt: second, madeAtSource: .gzipHeader)
        let next = Backup(name: sealed, madeAt: second - 1_000, madeAtSource: .fileTime)
        func newest(_ backups: [Backup]) -> String? { Backup.newestFirst(backups).first?.name.fileName }
        #expect(newest([first, next]) == sealed.fileName && newest([next, first]) == sealed.fileName)
        // Two seconds apart, the times decide whatever the names say.
        let muchLater = Backup(name: gzip, madeAt: second + 2_000, madeAtSource: .gzipHeader)
        #expect(newest([muchLater, next]) == gzip.fileName && newest([next, muchLater]) == gzip.fileName)
        // One minute and suffix for two forms (exports run at once): the time decides.
        let plainLater = Backup(name: plain, madeAt: second - 500, madeAtSource: .fileTime)
        #expect(newest([plainLater, next]) == plain.fileName && newest([next, plainLater]) == plain.fileName)
        #expect(RetentionPolicy(last: 1).plan([first, next]).newest?.fileName == sealed.fileName)
        // A plain `cp -r` of the folder: the .age's file time is the copy's, so its name dates
        // it, to the minute's start; the gzip header says :31. Within that minute the -2 decides
        // (prune removed the -2, the later of the two, the review found).
        let minuteStart = try #require(ArchiveDate.parse("2026-12-03T15:03:00.000Z"))
        let copied = Backup(name: sealed, madeAt: minuteStart, madeAtSource: .name)
        #expect(newest([first, copied]) == sealed.fileName && newest([copied, first]) == sealed.fileName)
        // A minute apart, the times decide.
        let nextMinute = Backup(name: try #require(BackupName("pulseloop-backup-2026-12-03-1504.json.gz")), madeAt: minuteStart + 60_000, madeAtSource: .gzipHeader)
        #expect(newest([nextMinute, copied]) == nextMinute.name.fileName)
    }

    @Test("one order whatever the sort compares first: the -n rule and the times never go in a circle (a review's three backups made prune keep one its gzip headers proved older)")
    func oneOrder() throws {
        func backup(_ name: String, _ time: String, _ source: Backup.Source) throws -> Backup {
            Backup(name: try #require(BackupName(name)), madeAt: try #require(ArchiveDate.parse(time)), madeAtSource: source)
        }
        // The review's case A: 10:00 made at :50; 12:00 made in UTC+2 at 10:00:40 UTC; the -2
        // of 10:00 made at :55 but dated by its name alone (a copy without its time).
        let bare = try backup("pulseloop-backup-2026-12-01-1000.json.gz", "2026-12-01T10:00:50.000Z", .gzipHeader)
        let east = try backup("pulseloop-backup-2026-12-01-1200.json.gz", "2026-12-01T10:00:40.000Z", .gzipHeader)
        let second = try backup("pulseloop-backup-2026-12-01-1000-2.json", "2026-12-01T10:00:00.000Z", .name)
        // Case B: a -3 whose header says :20, made by an export that ran beside the others.
        let third = try backup("pulseloop-backup-2026-12-01-1000-3.json.gz", "2026-12-01T10:00:20.000Z", .gzipHeader)
        for set in [[bare, east, second], [bare, second, third], [bare, east, second, third]] {
            var orders = Set<[String]>()
            var random = SeededRandom.fromEnvironment("PruneOrderTests.oneOrder")
            for _ in 0..<24 { orders.insert(Backup.newestFirst(set.shuffled(using: &random)).map(\.name.fileName)) }
            #expect(orders.count == 1, "\(orders)")
            let order = try #require(orders.first)
            // The -2 after the bare name of its minute, and the times between proven instants.
            #expect(order.firstIndex(of: second.name.fileName)! < order.firstIndex(of: bare.name.fileName)!, "\(order)")
            if set.contains(east) { #expect(order.firstIndex(of: bare.name.fileName)! < order.firstIndex(of: east.name.fileName)!, "\(order)") }
            if set.contains(third) { #expect(order.firstIndex(of: bare.name.fileName)! < order.firstIndex(of: third.name.fileName)!, "\(order)") }
        }
        // Through the binary, case A as the review made it: --keep-last 1 keeps the -2.
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 2)
        try FileManager.default.createDirectory(atPath: dir.file("d"), withIntermediateDirectories: false)
        for (epoch, name, form) in [(1_796_119_250, "pulseloop-backup-2026-12-01-1000.json.gz", "gzip"), (1_796_119_240, "pulseloop-backup-2026-12-01-1200.json.gz", "gzip"),
                                    (1_796_119_255, "pulseloop-backup-2026-12-01-1000-2.json", "none")] {
            let result = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("d/" + name), "--compression", form, "-q"],
                                     environment: ["SOURCE_DATE_EPOCH": String(epoch), "TZ": "UTC"])
            #expect(result.exitCode == 0, "\(result.stderr)")
        }
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_577_836_800)], ofItemAtPath: dir.file("d/pulseloop-backup-2026-12-01-1000-2.json"))
        let pruned = try CLI.run(["prune", dir.file("d"), "--keep-last", "1", "--dry-run", "--json"], environment: ["TZ": "UTC"])
        #expect(Self.kept(pruned) == ["pulseloop-backup-2026-12-01-1000-2.json"], "\(pruned.stdout)\(pruned.stderr)")
    }

    @Test("which time dates a backup: the gzip header's, else the file's, each only within the name's minute in some zone; else the name in TZ")
    func datingRules() throws {
        let name = try #require(BackupName("pulseloop-backup-2026-03-15-1200.json.gz"))
        let digits: Int64 = 1_773_576_000  // 2026-03-15T12:00:00Z, the digits read as UTC
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))  // UTC+1 in March
        #expect(name.possibleInstants == (digits - 14 * 3600)...(digits + 12 * 3600 + 59))
        // The gzip header wins, and the file's time refines it within its second.
        #expect(Backup.dated(name, gzipTime: digits, fileTime: (digits + 5) * 1000, zone: zone) == Backup(name: name, madeAt: digits * 1000, madeAtSource: .gzipHeader))
        #expect(Backup.dated(name, gzipTime: digits, fileTime: digits * 1000 + 250, zone: zone).madeAt == digits * 1000 + 250)
        // At either end of the window, and just past it.
        #expect(Backup.dated(name, gzipTime: digits - 14 * 3600, fileTime: nil, zone: zone).madeAtSource == .gzipHeader)
        #expect(Backup.dated(name, gzipTime: digits + 12 * 3600 + 59, fileTime: nil, zone: zone).madeAtSource == .gzipHeader)
        #expect(Backup.dated(name, gzipTime: digits + 12 * 3600 + 60, fileTime: nil, zone: zone).madeAtSource == .name)
        // MTIME 0 (no time), or a time no zone could show as 12:00 that day: the file's time.
        #expect(Backup.dated(name, gzipTime: 0, fileTime: (digits - 3600) * 1000, zone: zone) == Backup(name: name, madeAt: (digits - 3600) * 1000, madeAtSource: .fileTime))
        // A copy's file time a day later, and no gzip time: the name, read in the zone given.
        #expect(Backup.dated(name, gzipTime: nil, fileTime: (digits + 86_400) * 1000, zone: zone) == Backup(name: name, madeAt: (digits - 3600) * 1000, madeAtSource: .name))
    }

    @Test("names dated by themselves keep the order of their digits across a spring-forward gap: a minute the clocks skipped is the gap's end")
    func namesInASpringForwardGap() throws {
        for (zoneName, day, transition) in [("Europe/Berlin", "2021-03-28", Int64(1_616_893_200)), ("America/New_York", "2021-03-14", Int64(1_615_705_200))] {
            let zone = try #require(TimeZone(identifier: zoneName))
            let instants = try ["0159", "0200", "0230", "0259", "0300", "0301"].map { time in
                try #require(BackupName("pulseloop-backup-\(day)-\(time).json")).instant(in: zone)
            }
            #expect(instants == [transition - 60, transition, transition, transition, transition, transition + 60], "\(zoneName): \(instants)")
        }
        // The fall-back fold: the first of the two 02:30s (CEST).
        let fold = try #require(BackupName("pulseloop-backup-2021-10-31-0230.json"))
        #expect(fold.instant(in: try #require(TimeZone(identifier: "Europe/Berlin"))) == 1_635_640_200)
        // Every year on the archive's proleptic Gregorian calendar (Foundation's is Julian
        // before 1582), and an instant past 9999 held at the last one a date can show.
        let first = try #require(BackupName("pulseloop-backup-0001-01-01-0000.json"))
        #expect(first.instant(in: try #require(TimeZone(identifier: "UTC"))) == -62_135_596_800)
        let last = try #require(BackupName("pulseloop-backup-9999-12-31-2359.json"))
        let west = try #require(TimeZone(secondsFromGMT: -12 * 3600))
        #expect(Backup.dated(last, gzipTime: nil, fileTime: nil, zone: west).madeAt == ArchiveDate.representable.upperBound)
        // Through the binary: --keep-last 1 keeps 03:00, never the skipped 02:30.
        let dir = TemporaryDirectory()
        let plain = try CLI.shell("gzip -dc < '\(Repository.sampleFormat2)'", expectingSuccess: true).stdout
        try FileManager.default.createDirectory(atPath: dir.file("b"), withIntermediateDirectories: true)
        for time in ["0230", "0300"] {
            let path = dir.write("b/pulseloop-backup-2021-03-28-\(time).json", plain)
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 946_684_800)], ofItemAtPath: path)
        }
        let result = try CLI.run(["prune", dir.file("b"), "--keep-last", "1", "--dry-run", "--json"], environment: ["TZ": "Europe/Berlin"])
        #expect(Self.kept(result) == ["pulseloop-backup-2021-03-28-0300.json"], "\(result.stdout)\(result.stderr)")
    }

    /// Every other backup of `name`'s minute in `names` has a lower `-n`.
    static func expectLast(_ name: String, in names: Set<String>) throws {
        let parts = try #require(BackupNameParts(name))
        for other in names where other != name {
            guard let otherParts = BackupNameParts(other), otherParts.stem == parts.stem else { continue }
            #expect(otherParts.sequence < parts.sequence, "\(other) sorts after \(name)")
        }
    }

    /// The length of an age file's header (through the MAC line's newline).
    static func headerLength(_ bytes: [UInt8]) -> Int? {
        let mac = Array("\n---".utf8)
        guard let start = (0..<(bytes.count - mac.count)).first(where: { Array(bytes[$0..<$0 + mac.count]) == mac }) else { return nil }
        return bytes[(start + 1)...].firstIndex(of: 0x0A).map { $0 + 1 }
    }
}

/// A backup name's stem and `-n` (1 for none), for the tests' own checks.
struct BackupNameParts {
    let stem: String
    let sequence: Int

    init?(_ name: String) {
        guard name.hasPrefix("pulseloop-backup-"), let end = name.range(of: ".json.gz") else { return nil }
        let body = name[..<end.lowerBound]
        let stemLength = "pulseloop-backup-yyyy-MM-dd-HHmm".count
        guard body.count >= stemLength else { return nil }
        stem = String(body.prefix(stemLength))
        let rest = body.dropFirst(stemLength)
        sequence = rest.isEmpty ? 1 : Int(rest.dropFirst()) ?? 0
    }
}
