import Foundation
import Testing
@testable import PulseArchive
@testable import PulseDemo
@testable import PulseStore
import Readiness
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// Files at the edges of the one date range and the one number rule.
enum EdgeArchives {
    struct MissingPattern: Error { let pattern: String }

    /// The small valid iOS archive of `BadArchives` with the first match of `pattern` replaced.
    static func ios(_ pattern: String, _ replacement: String) throws -> String {
        let valid = try BadArchives.validText()
        guard let range = valid.range(of: pattern, options: .regularExpression) else { throw MissingPattern(pattern: pattern) }
        return valid.replacingCharacters(in: range, with: replacement)
    }

    /// An Android archive holding the given tables (Android keys → the array's JSON text).
    static func android(_ tables: KeyValuePairs<String, String>) -> String {
        "{\"formatVersion\":1,\"exportedAt\":1772306100000,\"appVersion\":\"tests\","
            + tables.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
    }

    static func androidMeasurement(timestamp: String = "1772000000000", createdAt: String = "1772000000000") -> String {
        #"[{"id":"history:hr:1","kindRaw":"HEART_RATE","value":61.5,"unit":"bpm","timestamp":\#(timestamp),"sourceRaw":"ring","createdAt":\#(createdAt)}]"#
    }

    static func androidBucket(startEpoch: String, timestamp: String? = nil) -> String {
        let stamp = timestamp.map { #","timestamp":\#($0)"# } ?? ""
        return #"[{"startEpoch":\#(startEpoch),"date":1772146800000,"steps":812,"distanceMeters":600.0,"source":"ring_history","updatedAt":1772179200000\#(stamp)}]"#
    }
}

@Suite("Dates and numbers: one rule for reader, writer and demo")
struct DatesAndNumbersTests {
    static let int64Min = "-9223372036854775808", int64Max = "9223372036854775807"

    /// Every way in to a file the rule refuses: `inspect`, `verify` and `import` (into a
    /// store with data, which stays byte-identical) exit 1, name the place, and never crash.
    func expectRefused(_ text: String, naming place: String, _ phrase: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let dir = TemporaryDirectory()
        let path = dir.write("edge.json", text)
        let store = dir.file("s")
        try StoreFixtures.demoStore(store, days: 2)
        let before = try #require(StoreFixtures.bytes(store + "/pulse.sqlite"))
        for arguments in [["inspect", path], ["verify", path], ["import", path, "--store", store, "--replace"],
                          ["import", path, "--store", store, "--merge"]] {
            let result = try CLI.run(arguments)
            #expect(result.exitCode == 1, "\(arguments[0]): exit \(result.exitCode)", sourceLocation: sourceLocation)
            let output = result.stderr + result.stdout
            #expect(output.contains(place) && output.contains(phrase), "\(arguments[0]): \(output)", sourceLocation: sourceLocation)
            #expect(!output.contains("Fatal error") && !output.contains("Backtrace"), "\(arguments[0]) crashed", sourceLocation: sourceLocation)
        }
        #expect(StoreFixtures.bytes(store + "/pulse.sqlite") == before, "a refused import changed pulse.sqlite", sourceLocation: sourceLocation)
        #expect(!FileManager.default.fileExists(atPath: store + "/backups"), sourceLocation: sourceLocation)
    }

    /// The closure property through the binary: `text` imports into an empty store, that store
    /// exports, the export imports into another empty store and verifies against it, and the
    /// second export has the rows of the first.
    /// - Returns: the first export's JSON text.
    @discardableResult
    func expectClosed(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let dir = TemporaryDirectory()
        let path = dir.write("edge.json", text)
        let first = try CLI.run(["import", path, "--store", dir.file("a"), "--no-backfill"])
        #expect(first.exitCode == 0, "import: \(first.stderr)", sourceLocation: sourceLocation)
        let export1 = try CLI.run(["export", "--store", dir.file("a"), "-o", dir.file("1.json.gz")])
        #expect(export1.exitCode == 0, "export: \(export1.stderr)", sourceLocation: sourceLocation)
        let second = try CLI.run(["import", dir.file("1.json.gz"), "--store", dir.file("b"), "--no-backfill"])
        #expect(second.exitCode == 0, "re-import: \(second.stderr)", sourceLocation: sourceLocation)
        let verify = try CLI.run(["verify", dir.file("1.json.gz"), "--store", dir.file("b")])
        #expect(verify.exitCode == 0, "verify: \(verify.stdout)\(verify.stderr)", sourceLocation: sourceLocation)
        let export2 = try CLI.run(["export", "--store", dir.file("b"), "-o", dir.file("2.json.gz")])
        #expect(export2.exitCode == 0, "second export: \(export2.stderr)", sourceLocation: sourceLocation)
        let snapshot1 = try StoreSnapshot(archive: dir.file("1.json.gz")), snapshot2 = try StoreSnapshot(archive: dir.file("2.json.gz"))
        #expect(snapshot1.sameContent(as: snapshot2), "the second export differs from the first", sourceLocation: sourceLocation)
        let data = try Data(contentsOf: URL(fileURLWithPath: dir.file("1.json.gz")))
        return try inflate(data, in: dir)
    }

    /// The JSON text of a gzip archive, through `gzip -dc` (not our own reader).
    private func inflate(_ data: Data, in dir: TemporaryDirectory) throws -> String {
        let path = dir.write("inflate.gz", data)
        return try CLI.shell("gzip -dc < '\(path)'", expectingSuccess: true).stdout
    }

    // MARK: - Dates

    @Test("an iOS date before 0000-01-01 UTC through its offset, or after 9999 through its offset, is refused naming table, row and field")
    func iosDatesOutsideTheYears() throws {
        try expectRefused(try EdgeArchives.ios(#""timestamp":"[^"]*""#, #""timestamp":"0000-01-01T00:00:00+00:01""#),
                          naming: "measurements[0].timestamp", "before the years 0000–9999")
        try expectRefused(try EdgeArchives.ios(#""createdAt":"[^"]*""#, #""createdAt":"9999-12-31T23:59:59.999-00:01""#),
                          naming: ".createdAt", "after the years 0000–9999")
        try expectRefused(try EdgeArchives.ios(#""exportedAt":"[^"]*""#, #""exportedAt":"0000-01-01T00:00:00+14:00""#),
                          naming: "exportedAt", "before the years 0000–9999")
        // A number there is the Android port's epoch milliseconds: the rule and what was found.
        for literal in ["1e400", "1.5", "9223372036854775808"] {
            try expectRefused(try EdgeArchives.ios(#""exportedAt":"[^"]*""#, #""exportedAt":\#(literal)"#),
                              naming: "exportedAt", "expected epoch milliseconds, a whole number within 64 bits; found \(literal)")
        }
    }

    @Test("the first and last instants of the years 0000–9999 import, export and import again unchanged")
    func iosDatesAtTheEdges() throws {
        var text = try EdgeArchives.ios(#""timestamp":"[^"]*""#, #""timestamp":"0000-01-01T00:01:00+00:01""#)
        text = text.replacingOccurrences(of: #""createdAt":"[^"]*""#, with: #""createdAt":"9999-12-31T23:59:59.999999Z""#, options: .regularExpression)
        let exported = try expectClosed(text)
        #expect(exported.contains(#""timestamp":"0000-01-01T00:00:00.000Z""#))
        #expect(exported.contains(#""createdAt":"9999-12-31T23:59:59.999Z""#))
    }

    @Test("an Android date at either end of Int64, in any date field, is refused naming table, row and field")
    func androidDatesAtInt64Ends() throws {
        try expectRefused(EdgeArchives.android(["measurements": EdgeArchives.androidMeasurement(timestamp: Self.int64Min)]),
                          naming: "measurements[0].timestamp", "before the years 0000–9999")
        try expectRefused(EdgeArchives.android(["measurements": EdgeArchives.androidMeasurement(createdAt: Self.int64Max)]),
                          naming: "measurements[0].createdAt", "after the years 0000–9999")
        try expectRefused(EdgeArchives.android(["mealEntries": #"[{"id":"m1","createdAt":\#(Self.int64Max),"updatedAt":0}]"#]),
                          naming: "mealEntries[0].createdAt", "after the years 0000–9999")
        try expectRefused(EdgeArchives.android(["activityBuckets": EdgeArchives.androidBucket(startEpoch: "1772175600000", timestamp: Self.int64Min)]),
                          naming: "activityBuckets[0].timestamp", "before the years 0000–9999")
    }

    @Test("an Android meal or food product whose date field is not epoch milliseconds is refused, not carried into the app's dialect")
    func androidExtensionDatesThatAreNoDates() throws {
        for (field, value) in [("createdAt", #""garbage""#), ("createdAt", "true"), ("createdAt", #"{"a":1}"#), ("createdAt", "1e20"),
                               ("createdAt", #""2026-01-01T00:00:00Z""#), ("date", "1.5"), ("loggedAt", "[]")] {
            let created = field == "createdAt" ? value : "1772175600000"
            let extra = field == "createdAt" ? "" : #","\#(field)":\#(value)"#
            try expectRefused(EdgeArchives.android(["mealEntries": #"[{"id":"m1","createdAt":\#(created),"updatedAt":0\#(extra)}]"#]),
                              naming: "mealEntries[0].\(field)", value == "1e20" ? "expected epoch milliseconds, a whole number within 64 bits; found 1e20" : "expected epoch milliseconds")
        }
        try expectRefused(EdgeArchives.android(["foodProducts": #"[{"code":"4006040000000","createdAt":"2026-03-10"}]"#]),
                          naming: "foodProducts[0].createdAt", "expected epoch milliseconds")
        // A null date stays null: the port writes a missing date so.
        let text = try expectClosed(EdgeArchives.android(["mealEntries": #"[{"id":"m1","createdAt":1772175600000,"updatedAt":0,"deletedAt":null}]"#]))
        #expect(text.contains(#""mealEntries":[{"createdAt":"2026-02-27T07:00:00.000Z","deletedAt":null,"id":"m1","updatedAt":"2026-02-27T07:00:00.000Z"}]"#), "\(text)")
    }

    @Test("an Android bucket whose startEpoch is Int64.min or Int64.max is refused by inspect, verify and import without a crash")
    func androidStartEpochAtInt64Ends() throws {
        try expectRefused(EdgeArchives.android(["activityBuckets": EdgeArchives.androidBucket(startEpoch: Self.int64Min)]),
                          naming: "activityBuckets[0].startEpoch", "before the years 0000–9999")
        try expectRefused(EdgeArchives.android(["activityBuckets": EdgeArchives.androidBucket(startEpoch: Self.int64Max)]),
                          naming: "activityBuckets[0].startEpoch", "after the years 0000–9999")
    }

    @Test("Android dates at the edges of the years 0000–9999 and a negative startEpoch come back unchanged")
    func androidDatesAtTheEdges() throws {
        let first = String(ArchiveDate.representable.lowerBound), last = String(ArchiveDate.representable.upperBound)
        let text = EdgeArchives.android([
            "measurements": EdgeArchives.androidMeasurement(timestamp: first, createdAt: last),
            "activityBuckets": "[" + EdgeArchives.androidBucket(startEpoch: first).dropFirst().dropLast() + ","
                + EdgeArchives.androidBucket(startEpoch: "-1500").dropFirst().dropLast() + "]",
        ])
        let exported = try expectClosed(text)
        #expect(exported.contains(#""timestamp":"0000-01-01T00:00:00.000Z""#) && exported.contains(#""createdAt":"9999-12-31T23:59:59.999Z""#))
        // Seconds rounded down, the timestamp the exact start.
        #expect(exported.contains(#""startEpoch":-62167219200"#))
        #expect(exported.contains(#""startEpoch":-2,"#) && exported.contains(#""timestamp":"1969-12-31T23:59:58.500Z""#))
    }

    @Test("the writer refuses a date outside the years 0000–9999, naming the row and field, before writing it")
    func writerNamesTheRow() throws {
        let dir = TemporaryDirectory()
        var content = InMemoryContent()
        var row = RowFactory.minimal(.measurements, index: 1)
        row[ArchiveTable.measurements.fieldIndex("timestamp")!] = .date(ArchiveDate.representable.upperBound + 1)
        content.rows["measurements"] = [RowFactory.minimal(.measurements, index: 2), row]
        #expect {
            try writeArchive(content, to: dir.file("a.json"), compressed: false)
        } throws: { error in
            "\(error)".contains("measurements[1].timestamp") && "\(error)".contains("after the years 0000–9999")
        }
    }

    // MARK: - demo

    @Test("demo refuses --end and --days that leave the years 0000–9999 with a usage error and no store")
    func demoOutsideTheYears() throws {
        let dir = TemporaryDirectory()
        for arguments in [["--end", "0001-01-01", "--days", "3650"], ["--end", "0000-01-01", "--days", "1"], ["--end", "9999-12-31", "--days", "1"]] {
            let result = try CLI.run(["demo", "--store", dir.file("d")] + arguments + ["--timezone", "UTC"])
            #expect(result.exitCode == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("outside the years 0000–9999") && result.stderr.contains("--end"), "\(arguments): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.file("d")), "\(arguments) made a store")
        }
    }

    @Test("a demo store at the first days it accepts exports, and import --replace of a good archive over it works")
    func demoAtTheEdgeExports() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("d")
        let demo = try CLI.run(["demo", "--store", store, "--end", "0000-01-06", "--days", "2", "--timezone", "UTC"])
        #expect(demo.exitCode == 0, "\(demo.stderr)")
        let export = try CLI.run(["export", "--store", store, "-o", dir.file("e.json.gz")])
        #expect(export.exitCode == 0, "\(export.stderr)")
        let replace = try CLI.run(["import", Repository.sampleFormat2, "--store", store, "--replace", "--no-backfill"])
        #expect(replace.exitCode == 0, "the safety backup is an export: \(replace.stderr)")
    }

    // MARK: - Readiness

    @Test("readiness stores no score for a local day that starts outside the years 0000–9999")
    func readinessDayOutsideTheYears() throws {
        let dir = TemporaryDirectory()
        let utc = TimeZone(identifier: "UTC")!
        let end = DateComponents(year: 2026, month: 3, day: 15)
        for (name, shifted) in [("control", false), ("shifted", true)] {
            var ring = SyntheticRing(options: DemoOptions(days: 14, seed: 3, endDay: end, timeZone: utc))
            let storePath = dir.file(name)
            _ = try ring.fill(storeDirectory: storePath)
            let store = try PulseStore.open(storePath, create: false)
            let endDay = LocalCalendar(timeZone: utc).startOfDay(year: 2026, month: 3, day: 15)
            // Whole days earlier, so that the end day starts a day before 0000-01-01T00:00Z.
            let shift = shifted ? (ArchiveDate.representable.lowerBound - 86_400_000 - endDay) : 0
            for table in ArchiveTable.all {
                for field in table.fields where field.type == .date {
                    try store.database.execute("UPDATE \(StoreSchema.quoted(table.key)) SET \(StoreSchema.quoted(field.name)) = \(StoreSchema.quoted(field.name)) + (\(shift))")
                }
            }
            let service = ReadinessService(store: store, timeZone: utc)
            _ = try service.backfill(days: 14, anchorDay: endDay + shift, now: 1_773_700_000_000, honoringToggle: false)
            let scored = try store.database.integer(#"SELECT count(*) FROM "readinessDailies""#)
            if shifted {
                #expect(scored == 0, "a readiness day before 0000-01-01 was stored")
            } else {
                #expect(scored > 0, "the control store scores days")
            }
        }
    }

    // MARK: - Numbers

    @Test("integer fields read the exact value of integral literals and refuse the others", arguments: [
        ("9007199254740993.0", Int64(9_007_199_254_740_993)), ("9007199254740993", 9_007_199_254_740_993), ("-0", 0), ("-0.0", 0),
        ("1e3", 1000), ("1E+2", 100), ("1000e-3", 1), ("0.5e1", 5), ("0e999999999999", 0), ("-9223372036854775808.0", Int64.min),
        ("9223372036854775807", Int64.max), ("92233720368547758070e-1", Int64.max),
    ])
    func integerLiterals(_ literal: String, _ value: Int64) {
        #expect(ArchiveNumber.integer(Array(literal.utf8)) == value, "\(literal)")
    }

    @Test("integer fields refuse literals that are not integers within 64 bits",
          arguments: ["1.5", "9223372036854775808", "-9223372036854775809", "1e19", "9223372036854775807.5", "1e-400", "1e99999999999", "0.1"])
    func nonIntegerLiterals(_ literal: String) {
        #expect(ArchiveNumber.integer(Array(literal.utf8)) == nil, "\(literal)")
    }

    @Test("double fields keep negative zero: -0 is read as -0.0, a value that underflows to zero keeps its sign")
    func negativeZeroKeepsItsSign() throws {
        for literal in ["-0", "-0.0", "-0e5", "-1e-400"] {
            var bytes = Array(literal.utf8)
            let value = try #require(ArchiveNumber.double(&bytes))
            #expect(value == 0 && value.sign == .minus, "\(literal)")
        }
        let dir = TemporaryDirectory()
        let path = dir.write("z.json", try EdgeArchives.ios(#""value":[^,}]*"#, #""value":-0"#))
        var visitor = CollectingVisitor()
        try ArchiveReader(path: path).read(into: &visitor)
        guard case .double(let value) = visitor.rows["measurements"]?.first?[ArchiveTable.measurements.fieldIndex("value")!] else {
            Issue.record("no value read")
            return
        }
        #expect(value == 0 && value.sign == .minus)
        #expect(FieldValue.double(-0.0) != FieldValue.double(0), "a round trip that lost the sign would compare equal")
    }

    @Test("an integer field written 9007199254740993.0 and -0 in a double field come back exactly through import, export and import")
    func numbersThroughTheBinary() throws {
        var text = try EdgeArchives.ios(#""totalMinutes":-?[0-9]+"#, #""totalMinutes":9007199254740993.0"#)
        text = text.replacingOccurrences(of: #""value":[^,}]*"#, with: #""value":-0"#, options: .regularExpression)
        let exported = try expectClosed(text)
        #expect(exported.contains(#""totalMinutes":9007199254740993,"#), "the integer lost precision")
        #expect(exported.contains(#""value":-0}"#) && !exported.contains(#""value":0}"#), "negative zero came back as zero")
        let dir = TemporaryDirectory()
        let verify = try CLI.run(["verify", dir.write("n.json", text)])
        #expect(verify.exitCode == 0, "\(verify.stdout)\(verify.stderr)")
    }

    @Test("verify against a store that holds 0 where the archive has -0 reports the difference")
    func verifySeesTheSign() throws {
        let dir = TemporaryDirectory()
        let negative = dir.write("negative.json", try EdgeArchives.ios(#""value":[^,}]*"#, #""value":-0"#))
        let positive = dir.write("positive.json", try EdgeArchives.ios(#""value":[^,}]*"#, #""value":0"#))
        let store = dir.file("store")
        let imported = try CLI.run(["import", positive, "--store", store, "--no-backfill"])
        #expect(imported.exitCode == 0, "\(imported.stderr)")
        let verify = try CLI.run(["verify", negative, "--store", store])
        #expect(verify.exitCode == 1, "\(verify.stdout)\(verify.stderr)")
        #expect(verify.stdout.contains("measurements"), "\(verify.stdout)")
    }

    @Test("an integer field with a fraction is refused naming table, row and field")
    func fractionalInteger() throws {
        try expectRefused(try EdgeArchives.ios(#""totalMinutes":-?[0-9]+"#, #""totalMinutes":9007199254740993.5"#),
                          naming: "sleepSessions[0].totalMinutes", "not an integer within 64 bits")
    }

    @Test("the writer refuses a double that is not finite, naming the row and field")
    func writerRefusesNonFiniteDoubles() throws {
        let dir = TemporaryDirectory()
        var content = InMemoryContent()
        var row = RowFactory.minimal(.measurements, index: 1)
        row[ArchiveTable.measurements.fieldIndex("value")!] = .double(.infinity)
        content.rows["measurements"] = [row]
        #expect {
            try writeArchive(content, to: dir.file("a.json"), compressed: false)
        } throws: { error in
            "\(error)".contains("measurements[0].value") && "\(error)".contains("not a finite number")
        }
    }
}
