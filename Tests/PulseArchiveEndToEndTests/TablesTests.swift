import Foundation
import Testing
@testable import PulseArchive
@testable import PulseTestSupport

/// `tables`: every table of an archive or a store as CSV or NDJSON (docs/analysis.md). The round
/// trips read every file back with Python's `csv` and `json` modules and with the sqlite3 shell's
/// `.import --csv` (scripts/check_tables.py) and compare every value with an export of the same
/// data.
@Suite("tables")
struct TablesTests {
    static let toolsAvailable = ["python3", "sqlite3"].allSatisfy { tool in
        ProcessInfo.processInfo.environment["PATH", default: "/usr/bin:/bin"].split(separator: ":")
            .contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
    }

    /// A shell line with `$PA` the built binary.
    @discardableResult
    static func sh(_ script: String, in dir: TemporaryDirectory, expectingSuccess: Bool = true,
                   sourceLocation: SourceLocation = #_sourceLocation) throws -> CLI.Result {
        try CLI.shell(script, environment: ["CHECK": Repository.root + "/scripts/check_tables.py"], in: dir.path,
                      expectingSuccess: expectingSuccess, sourceLocation: sourceLocation)
    }

    /// Values a CSV reader or a spreadsheet could lose or misread, one per wearable log.
    static let hostileTexts: [String] = [
        "=1+2", "+41 79 000 00 00", "-5", "@SUM(A1:A2)", " leading space", "trailing space ", "\ttab", "a,b", "say \"hi\"",
        "cr\ronly", "lf\nonly", "crlf\r\nend", "nul\u{0000}inside", "\u{0000}", "🏃‍♀️ Zoë 漢字", "", "\u{FEFF}bom", "\\back\\slash/",
        String(repeating: "long, \"quoted\"\r\nvalue ", count: 12_000),
    ]

    /// An archive of every table (RowFactory's rows, themselves with NUL, quotes, newlines and
    /// extreme numbers), a wearable log per hostile text, extreme doubles and dates, and an
    /// attachment whose name a CSV must quote.
    static func writeHostileArchive(to path: String) throws {
        var content = RowFactory.everyTable()
        let logs = ArchiveTable.wearableLogs
        for (i, text) in hostileTexts.enumerated() {
            var row = RowFactory.full(logs, index: 10 + i)
            row[logs.fieldIndex("message")!] = .string(text)
            row[logs.fieldIndex("metadataJSON")!] = .string(text)
            content.rows[logs.key, default: []].append(row)
        }
        let measurements = ArchiveTable.measurements
        let extremes: [(Double, Int64)] = [(.greatestFiniteMagnitude, ArchiveDate.representable.lowerBound), (.leastNonzeroMagnitude, ArchiveDate.representable.upperBound),
                                          (-0.0, 0), (1e-7, -1), (-1.5e300, 1_772_000_000_001)]
        for (i, (value, date)) in extremes.enumerated() {
            var row = RowFactory.full(measurements, index: 20 + i)
            row[measurements.fieldIndex("value")!] = .double(value)
            row[measurements.fieldIndex("timestamp")!] = .date(date)
            content.rows[measurements.key, default: []].append(row)
        }
        content.attachments.append(("odd, \"name\" ü.bin", Array(repeating: 0x2C, count: 300_000)))
        try writeArchive(content, to: path)
    }

    /// Imports `archive` into a store, exports it, writes its tables in both formats from the
    /// archive as `source` names it (a path, or `-` with a redirect), and checks every value.
    func roundTrip(_ archive: String, source: String? = nil, keys: String = "", in dir: TemporaryDirectory) throws {
        try Self.sh("\"$PA\" import \(archive) \(keys) --store s --no-backfill -q && \"$PA\" export --store s -o e.json.gz -q", in: dir)
        for format in ["csv", "ndjson"] {
            try Self.sh("rm -rf t-\(format) && \"$PA\" tables \(source ?? archive) \(keys) -o t-\(format) --format \(format) -q", in: dir)
            let check = try Self.sh("python3 \"$CHECK\" e.json.gz t-\(format) \(format)", in: dir)
            #expect(check.stdout.hasPrefix("ok: "), "\(archive) \(format): \(check.stderr)")
        }
        try Self.sh("rm -rf s e.json.gz", in: dir)
    }

    @Test("golden, Android, hostile, gzip, age and stdin archives: Python's csv, json and sqlite3 .import read back every value an export holds",
          .enabled(if: Capability.enabled(toolsAvailable)))
    func roundTrips() throws {
        try Capability.require(Self.toolsAvailable, "python3 and the sqlite3 shell")
        let dir = TemporaryDirectory()
        try Self.writeHostileArchive(to: dir.file("hostile.json.gz"))
        // A demo store's export carries workout documents and stubs.
        try Self.sh("\"$PA\" demo --store demo --days 20 >/dev/null 2>&1 && \"$PA\" export --store demo -o demo.json.gz -q", in: dir)
        for archive in [Repository.sampleFormat1, Repository.sampleFormat2, Repository.sampleAndroid, "hostile.json.gz", "demo.json.gz"] {
            try roundTrip(archive, in: dir)
        }
        // The hostile file (written by the writer an export uses) went through NUL and all:
        // sqlite3 cut values at NUL, Python did not.
        let hostile = try Self.sh("\"$PA\" tables hostile.json.gz -o h -q >/dev/null && python3 \"$CHECK\" hostile.json.gz h csv", in: dir)
        #expect(hostile.stdout.hasPrefix("ok: ") && !hostile.stdout.contains("(0 values with NUL"), "\(hostile.stdout)\(hostile.stderr)")
        // The same hostile archive as plain JSON on standard input, and encrypted to a key.
        try Self.sh("gzip -dc hostile.json.gz > hostile.json && \"$PA\" keygen -o key.txt 2>/dev/null >/dev/null", in: dir)
        try roundTrip("hostile.json", source: "- < hostile.json", in: dir)
        try Self.sh("\"$PA\" import hostile.json.gz --store k --no-backfill -q && \"$PA\" export --store k -o h.json.gz.age -r $(\"$PA\" keygen -y key.txt) -q", in: dir)
        try roundTrip("h.json.gz.age", keys: "-i key.txt", in: dir)
    }

    @Test("CSV cells: formula-like values as they are, RFC 4180 quoting, CRLF, no BOM, every byte kept; 0700/0600")
    func cells() throws {
        let dir = TemporaryDirectory()
        try Self.writeHostileArchive(to: dir.file("hostile.json.gz"))
        try Self.sh("\"$PA\" tables hostile.json.gz -o t -q", in: dir)
        let bytes = try #require(FileManager.default.contents(atPath: dir.file("t/wearableLogs.csv")))
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("id,timestamp,deviceTypeRaw,categoryRaw,levelRaw,message,metadataJSON\r\n"))
        for cell in [",=1+2,=1+2\r\n", ",-5,-5\r\n", ",@SUM(A1:A2),@SUM(A1:A2)\r\n", ",+41 79 000 00 00,", #","a,b","a,b""#, #","say ""hi""","#,
                     "\"cr\ronly\"", "\"nul\u{0000}inside\"", ",\"\",\"\"\r\n", "\" leading space\"", "\"trailing space \"", "🏃‍♀️ Zoë 漢字"] {
            #expect(text.contains(cell), "no \(cell.debugDescription) in wearableLogs.csv")
        }
        #expect(!text.hasPrefix("\u{FEFF}"))
        let measurements = try String(contentsOfFile: dir.file("t/measurements.csv"), encoding: .utf8)
        for cell in [",1.7976931348623157e+308,", ",5e-324,", ",-0,", ",1e-07,", ",0000-01-01T00:00:00.000Z,", ",9999-12-31T23:59:59.999Z,", ",1969-12-31T23:59:59.999Z,"] {
            #expect(measurements.contains(cell), "no \(cell) in measurements.csv")
        }
        // Every record ends CRLF: a bare CR or LF occurs only inside a quoted value.
        for name in ["measurements.csv", "wearableLogs.csv", "devices.csv"] {
            #expect(Self.recordsEndCRLF(Array(try #require(FileManager.default.contents(atPath: dir.file("t/\(name)"))))), "\(name)")
        }
        let manifest = try String(contentsOfFile: dir.file("t/attachments.csv"), encoding: .utf8)
        #expect(manifest.contains("\"odd, \"\"name\"\" ü.bin\",300000,"))
        #expect(FileManager.default.contents(atPath: dir.file("t/attachments/odd, \"name\" ü.bin"))?.count == 300_000)
        for path in ["t", "t/attachments", "t/documentFiles"] {
            #expect((try FileManager.default.attributesOfItem(atPath: dir.file(path))[.posixPermissions] as? Int) == 0o700, "\(path)")
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.file("t")) where !["attachments", "documentFiles"].contains(name) {
            #expect((try FileManager.default.attributesOfItem(atPath: dir.file("t/\(name)"))[.posixPermissions] as? Int) == 0o600, "\(name)")
        }
    }

    /// Whether every CR and LF outside quotes is a CRLF pair, and the file ends with one.
    static func recordsEndCRLF(_ bytes: [UInt8]) -> Bool {
        var quoted = false
        var i = 0
        while i < bytes.count {
            switch bytes[i] {
            case 0x22: quoted.toggle()
            case 0x0D where !quoted:
                guard i + 1 < bytes.count, bytes[i + 1] == 0x0A else { return false }
                i += 1
            case 0x0A where !quoted: return false
            default: break
            }
            i += 1
        }
        return !quoted && bytes.suffix(2) == [0x0D, 0x0A]
    }

    @Test("tables.json: every file with its rows and typed columns, units from the format; header-only files for empty tables")
    func manifest() throws {
        let dir = TemporaryDirectory()
        try Self.sh("\"$PA\" tables \(Repository.sampleFormat1) -o t --json > report.json", in: dir)
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.file("t/tables.json")))) as? [String: Any])
        let tables = try #require(manifest["tables"] as? [String: [String: Any]])
        #expect(Set(tables.keys) == Set(ArchiveTable.all.map(\.key) + ["documents", "documentStubs", "documentFiles", "settings", "attachments"]))
        func column(_ table: String, _ name: String) -> [String: String]? {
            (tables[table]?["columns"] as? [[String: String]])?.first { $0["name"] == name }
        }
        #expect(column("measurements", "value") == ["name": "value", "type": "real", "unitColumn": "unit"])
        #expect(column("measurements", "timestamp") == ["name": "timestamp", "type": "date"])
        #expect(column("activityBucketSamples", "startEpoch") == ["name": "startEpoch", "type": "integer", "unit": "s"])
        #expect(column("activityDailies", "distanceMeters")?["unit"] == "m" && column("sleepSessions", "totalMinutes")?["unit"] == "min")
        #expect(column("userProfiles", "onboardingCompleted")?["type"] == "boolean" && column("devices", "id")?["type"] == "text")
        #expect(column("settings", "value")?["type"] == "JSON")
        // Format 1 has no readinessDailies: a file with the header alone.
        #expect(tables["readinessDailies"]?["rows"] as? Int == 0)
        let header = try String(contentsOfFile: dir.file("t/readinessDailies.csv"), encoding: .utf8)
        #expect(header == ArchiveTable.readinessDailies.fields.map(\.name).joined(separator: ",") + "\r\n")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.file("report.json")))) as? [String: Any])
        let counts = try #require(report["tables"] as? [String: Int])
        #expect(report["path"] as? String == "t" && report["format"] as? String == "csv")
        for (key, entry) in tables { #expect(counts[key] == entry["rows"] as? Int, "\(key)") }
    }

    @Test("--store writes what the store's export holds: the same files as tables of that export, byte for byte; --table writes only those")
    func storeSource() throws {
        let dir = TemporaryDirectory()
        try Self.sh("\"$PA\" import \(Repository.sampleAndroid) --store s -q 2>/dev/null && \"$PA\" export --store s -o e.json.gz -q", in: dir)
        for format in ["csv", "ndjson"] {
            try Self.sh("\"$PA\" tables --store s -o from-store-\(format) --format \(format) -q && \"$PA\" tables e.json.gz -o from-export-\(format) --format \(format) -q", in: dir)
            try Self.sh("diff -r from-store-\(format) from-export-\(format)", in: dir)
        }
        try Self.sh("test -s from-store-csv/mealEntries.csv && test -s from-store-csv/readinessDailies.csv", in: dir)
        try Self.sh("\"$PA\" tables --store s -o some --table measurements --table settings -q", in: dir)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir.file("some"))) == ["measurements.csv", "settings.csv", "tables.json"])
    }

    @Test("--store refuses what export refuses of a store a hand edit changed, with the same message, and warns of what export warns of")
    func storeSourceRefusesWhatExportRefuses() throws {
        let dir = TemporaryDirectory()
        try Self.sh("\"$PA\" import \(Repository.sampleAndroid) --store s -q 2>/dev/null", in: dir)
        for (sql, message) in [
            (#"INSERT INTO mealEntries VALUES ('m9', '[1]')"#, "cannot be exported: expected a row object"),
            (#"INSERT INTO mealEntries VALUES ('m9', '{"x":1}')"#, #"cannot be exported: missing the required field "id""#),
            ("ALTER TABLE userProfiles DROP COLUMN unitsRaw; ALTER TABLE userProfiles ADD COLUMN unitsRaw TEXT", #"userProfiles[0]: the required field "unitsRaw" has no value"#),
        ] {
            dir.write("edit.sql", sql + ";\n")
            try Self.sh("rm -rf e && cp -a s e && sqlite3 e/pulse.sqlite < edit.sql", in: dir)
            let export = try Self.sh("\"$PA\" export --store e -o e.json.gz", in: dir, expectingSuccess: false)
            let tables = try Self.sh("\"$PA\" tables --store e -o t", in: dir, expectingSuccess: false)
            #expect(export.exitCode == 1 && export.stderr.contains(message), "\(sql): export: \(export.stderr)")
            #expect(tables.exitCode == 1 && tables.stderr == export.stderr, "\(sql): tables: \(tables.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.file("t")) && !FileManager.default.fileExists(atPath: dir.file("e.json.gz")))
        }
        // A document file export leaves out with a warning, tables leaves out with the same one.
        try Self.sh("mkdir -p s/Splits && printf '{}' > \"s/Splits/$(printf 'caf\\351').json\"", in: dir)
        let export = try Self.sh("\"$PA\" export --store s -o w.json.gz", in: dir)
        let tables = try Self.sh("\"$PA\" tables --store s -o w", in: dir)
        let warning = #"warning: documents: Splits/caf\xE9.json has a name that is not UTF-8 (not archived, left in place)"#
        #expect(export.stderr.contains(warning) && tables.stderr.contains(warning), "export: \(export.stderr)\ntables: \(tables.stderr)")
    }

    @Test("refused: a folder that is not empty, a link, a file, an unknown --table, both or no source; nothing changes")
    func refusals() throws {
        let dir = TemporaryDirectory()
        try Self.sh("mkdir full empty && echo keep > full/x && ln -s empty link && echo f > file", in: dir)
        for (target, why) in [("full", "is not empty"), ("link", "is a symbolic link"), ("file", "is not a directory")] {
            let refused = try Self.sh("\"$PA\" tables \(Repository.sampleFormat1) -o \(target)", in: dir, expectingSuccess: false)
            #expect(refused.exitCode == 1 && refused.stderr.hasPrefix("Error: \(target) ") && refused.stderr.contains(why), "\(target): \(refused.stderr)")
        }
        #expect(try String(contentsOfFile: dir.file("full/x"), encoding: .utf8) == "keep\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("empty")).isEmpty)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dir.file("link")) == "empty")
        // `.` (or a mount point) is empty but cannot be renamed over: refused before the work.
        let dot = try Self.sh("cd empty && \"$PA\" tables \(Repository.sampleFormat1) -o .", in: dir, expectingSuccess: false)
        #expect(dot.exitCode == 1 && dot.stderr.contains("name a new folder inside it") && !dot.stderr.contains("busy"), "\(dot.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("empty")).isEmpty)
        let unknown = try Self.sh("\"$PA\" tables \(Repository.sampleFormat1) -o new --table measurement", in: dir, expectingSuccess: false)
        #expect(unknown.exitCode == 64 && unknown.stderr.contains("'measurement'") && unknown.stderr.contains("measurements, batterySamples"))
        #expect(unknown.stderr.contains("Usage: pulse-archive tables"))
        for arguments in ["-o new", "\(Repository.sampleFormat1) --store s -o new", "\(Repository.sampleFormat1)", "\(Repository.sampleFormat1) -o new --format tsv"] {
            #expect(try Self.sh("\"$PA\" tables \(arguments)", in: dir, expectingSuccess: false).exitCode == 64, "\(arguments)")
        }
        // An empty directory is taken; a new name too where the file system has no no-replace rename.
        try Self.sh("\"$PA\" tables \(Repository.sampleFormat1) -o empty -q && test -f empty/tables.json", in: dir)
        try Self.sh("PULSE_ARCHIVE_TEST_REFUSE=rename-noreplace \"$PA\" tables \(Repository.sampleFormat1) -o plain -q && test -f plain/tables.json && rm -r plain", in: dir)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir.path)) == ["full", "empty", "link", "file"])
    }

    @Test("a cut or corrupt archive, or an unsafe attachment name, leaves no folder and nothing beside it")
    func refusedArchives() throws {
        let dir = TemporaryDirectory()
        let golden = try #require(FileManager.default.contents(atPath: Repository.sampleFormat2))
        dir.write("cut.json.gz", golden.prefix(golden.count / 2))
        var corrupt = golden
        corrupt[corrupt.count / 2] ^= 0xFF
        dir.write("corrupt.json.gz", corrupt)
        try Self.sh("gzip -dc \(Repository.sampleFormat2) | sed 's/\"file\":\"[^\"]*\"/\"file\":\"..\\/escaped\"/' > escape.json", in: dir)
        // A name the archive allows (under 1 KiB) that no Linux file system takes (over 255 bytes).
        let long = String(repeating: "n", count: 300)
        try Self.sh("gzip -dc \(Repository.sampleFormat2) | sed 's/\"file\":\"[^\"]*\"/\"file\":\"\(long)\"/' > long.json", in: dir)
        let archives = ["cut.json.gz", "corrupt.json.gz", "escape.json", "long.json"]
        for archive in archives {
            let refused = try Self.sh("\"$PA\" tables \(archive) -o out", in: dir, expectingSuccess: false)
            #expect(refused.exitCode == 1 && refused.stderr.hasPrefix("Error: "), "\(archive): \(refused.stderr)")
            if archive == "long.json" {
                #expect(refused.stderr.contains("the attachments entry '\(long)' cannot be a file here"), "\(refused.stderr)")
            }
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir.path)) == Set(archives), "\(archive)")
        }
        // A store whose attachment name would leave the folder (edited by hand): refused too.
        try Self.sh("\"$PA\" import \(Repository.sampleFormat1) --store s -q && sqlite3 s/pulse.sqlite \"UPDATE attachments SET file = '../escaped'\"", in: dir)
        let store = try Self.sh("\"$PA\" tables --store s -o out", in: dir, expectingSuccess: false)
        #expect(store.exitCode == 1 && store.stderr.contains("unsafe attachment name"), "\(store.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("out")) && !FileManager.default.fileExists(atPath: dir.file("escaped")))
    }

    @Test("a target that gains a file (or appears) while the tables are written is left as it is: the commit replaces only an empty directory")
    func targetChangesMeanwhile() throws {
        for existed in [true, false] {
            let dir = TemporaryDirectory()
            if existed { try FileManager.default.createDirectory(atPath: dir.file("out"), withIntermediateDirectories: false) }
            let process = CLI.process(["tables", Repository.sampleFormat2, "-o", dir.file("out")], environment: [KillPoints.variable: "commit:1"])
            let err = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = err
            try process.run()
            let (reached, _) = KillPoints.awaitPause("commit:1", on: err)
            #expect(reached && KillPoints.isStopped(process.processIdentifier))
            if !existed { try FileManager.default.createDirectory(atPath: dir.file("out"), withIntermediateDirectories: false) }
            dir.write("out/mine.txt", "keep")
            kill(process.processIdentifier, SIGCONT)
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            let why = existed ? "is no longer new or empty" : "appeared while it was written"
            #expect(process.terminationStatus == 1 && stderr.contains(why), "\(stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("out")) == ["mine.txt"])
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["out"])
        }
    }

    @Test("interrupted before the folder is renamed into place: nothing left; a kill's staging folder is removed by the next run")
    func interrupted() throws {
        let dir = TemporaryDirectory()
        let out = dir.file("out")
        try KillPoints.expectStopped(["tables", Repository.sampleFormat2, "-o", out], at: "commit:1", with: SIGINT)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
        try KillPoints.expectStopped(["tables", Repository.sampleFormat2, "-o", out], at: "commit:1", with: SIGKILL)
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(left.count == 1 && left[0].hasPrefix(".out.staging-"), "\(left)")
        let again = try CLI.run(["tables", Repository.sampleFormat2, "-o", out, "-q"])
        #expect(again.exitCode == 0, "\(again.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["out"])
    }
}
