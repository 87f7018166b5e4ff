import Foundation
import Testing
@testable import PulseArchive
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// Builders for the files every refusal test uses, derived from a real archive.
enum BadArchives {
    /// A small valid archive as plain JSON text (one row in several tables).
    static func validText() throws -> String {
        let dir = TemporaryDirectory()
        var content = InMemoryContent()
        for table in [ArchiveTable.measurements, .sleepSessions, .devices] {
            content.rows[table.key] = [RowFactory.minimal(table, index: 1), RowFactory.minimal(table, index: 2)]
        }
        content.attachments = [("photo.jpg", [1, 2, 3])]
        try writeArchive(content, to: dir.file("v.json"), compressed: false)
        return try String(contentsOfFile: dir.file("v.json"), encoding: .utf8)
    }

    /// Every refused input of the codec issue: name, file bytes, a phrase the message holds.
    static func all() throws -> [(name: String, bytes: [UInt8], message: String)] {
        let valid = try validText()
        let dir = TemporaryDirectory()
        try gzipped(Array(valid.utf8), to: dir.file("v.json.gz"))
        let gzip = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.file("v.json.gz"))))
        var flipped = gzip
        flipped[gzip.count / 2] ^= 0x40
        let firstId = RowFactory.uuid(100)  // the minimal row with index 1 has this id
        let secondId = RowFactory.uuid(200)
        struct FixtureError: Error { let missing: String }
        /// Replaces the first match of a regular expression in the valid text.
        func edit(_ pattern: String, _ replacement: String) throws -> [UInt8] {
            guard let range = valid.range(of: pattern, options: .regularExpression) else { throw FixtureError(missing: pattern) }
            return Array(valid.replacingCharacters(in: range, with: replacement).utf8)
        }
        return [
            ("formatVersion 3", try edit(#""formatVersion":2"#, #""formatVersion":3"#), "format 3; this tool reads up to 2"),
            ("formatVersion only", Array(#"{"formatVersion": 1}"#.utf8), "missing required key"),
            ("formatVersion 0", try edit(#""formatVersion":2"#, #""formatVersion":0"#), "formatVersion 0 is below 1"),
            ("formatVersion 2.5", try edit(#""formatVersion":2"#, #""formatVersion":2.5"#), "formatVersion 2.5 is not an integer"),
            ("formatVersion past 64 bits", try edit(#""formatVersion":2"#, #""formatVersion":20000000000000000000000"#),
             "this archive is format 20000000000000000000000; this tool reads up to 2"),
            ("formatVersion string", try edit(#""formatVersion":2"#, #""formatVersion":"2""#), "missing formatVersion"),
            ("no formatVersion", try edit(#""formatVersion":2,"#, ""), "missing formatVersion"),
            // (Not a ZIP's "PK\u{03}\u{04}": import and inspect take a ZIP for a Gadgetbridge backup.)
            ("not JSON", Array("BZh91AY&SY this is bzip2".utf8), "neither gzip nor a JSON object"),
            ("JSON but broken", Array(valid.dropLast(40).utf8), "not a PulseLoop archive, or damaged"),
            ("empty file", [], "is empty"),
            ("truncated gzip", Array(gzip.prefix(gzip.count - 30)), "cut short"),
            ("flipped byte", flipped, "damaged"),
            ("trailing garbage", gzip + Array("garbage".utf8), "has unexpected bytes after the end of its gzip stream"),
            ("two gzip members", gzip + gzip, "has a second gzip member after the end of its gzip stream (at byte \(gzip.count))"),
            ("duplicate ids", try edit(secondId, firstId), "duplicate device entries and can't be imported: devices[1] repeats id"),
            ("unsafe attachment name", try edit(#""file":"photo\.jpg""#, #""file":"..\/..\/etc\/passwd""#), "unsafe attachment name"),
            ("hidden attachment name", try edit(#""file":"photo\.jpg""#, #""file":".hidden""#), "unsafe attachment name"),
            ("invalid base64", try edit(#""base64":"AQID""#, #""base64":"AQ!D""#), "attachments[0].base64: invalid base64"),
            ("wrong type", try edit(#""totalMinutes":-?[0-9]+"#, #""totalMinutes":"seven""#), "sleepSessions[0].totalMinutes: expected an integer, found a string"),
            ("bad date", try edit(#""timestamp":"[^"]*""#, #""timestamp":"2026-02-30T06:13:24Z""#), #"unrecognized date "2026-02-30T06:13:24Z""#),
            ("epoch date", try edit(#""timestamp":"[^"]*""#, #""timestamp":1772000000000"#), "unrecognized date 1772000000000"),
            ("bad UUID", try edit(firstId, "not-a-uuid"), "not a UUID"),
            ("null required", try edit(#""unit":"#, #""unit":null,"x":"#), #"null in the required field "unit""#),
            ("integer beyond 64 bits", try edit(#""totalMinutes":-?[0-9]+"#, #""totalMinutes":99999999999999999999"#), "not an integer within 64 bits"),
            ("lone surrogate", try edit(#""unit":""#, #""unit":"\udc00"#), "lone low surrogate"),
            ("100 000 nested arrays", Array(("{\"x\":" + String(repeating: "[", count: 100_000)).utf8), "deeper than the limit of 256"),
            // What the JSON scanner finds inside a row names the row, not only the byte.
            ("long number", try edit(#""totalMinutes":-?[0-9]+"#, "\"totalMinutes\":1" + String(repeating: "0", count: 70)), "sleepSessions[0]: a number literal near byte"),
            ("leading zero", try edit(#""totalMinutes":-?[0-9]+"#, #""totalMinutes":01"#), #"sleepSessions[0]: invalid JSON at byte"#),
            ("raw tab", try edit(#""unit":""#, "\"unit\":\"\t"), "[0]: invalid JSON at byte"),
        ]
    }
}

@Suite("inspect through the built binary")
struct InspectCLITests {
    @Test("every refused input exits 1 with a message naming the problem")
    func refusals() throws {
        let dir = TemporaryDirectory()
        for (name, bytes, message) in try BadArchives.all() {
            let path = dir.write(name.replacingOccurrences(of: " ", with: "-"), Data(bytes))
            let result = try CLI.run(["inspect", path])
            #expect(result.exitCode == 1, "\(name): exit \(result.exitCode)")
            #expect(result.stderr.hasPrefix("Error: "), "\(name)")
            #expect(result.stderr.contains(message), "\(name): \(result.stderr)")
            // The file is named, as a job that reads many needs.
            #expect(result.stderr.contains(path), "\(name): \(result.stderr)")
            #expect(!result.stderr.contains("Backtrace") && !result.stderr.contains("Fatal error"), "\(name)")
            #expect(result.stdout.isEmpty, "\(name)")
        }
    }

    @Test("a newer format is reported as such even when its rows fail first")
    func newerFormatWins() throws {
        let dir = TemporaryDirectory()
        // Sorted keys put formatVersion after the tables; the row is wrong for format 2.
        let text = try BadArchives.validText()
            .replacingOccurrences(of: #""formatVersion":2,"#, with: "")
            .replacingOccurrences(of: #""wearableLogs":[]"#, with: #""formatVersion":3,"wearableLogs":[]"#)
            .replacingOccurrences(of: #""totalMinutes":-?[0-9]+"#, with: #""totalMinutes":{"hours":7}"#)
        let result = try CLI.run(["inspect", dir.write("v3.json", text)])
        #expect(result.exitCode == 1)
        #expect(result.stderr.contains("format 3; this tool reads up to 2: update pulse-archive"))
    }

    @Test("inspect --json reports the rows found per table, the declared counts, sizes and versions")
    func jsonReport() throws {
        for path in [Repository.sampleFormat1, Repository.sampleFormat2] {
            let result = try CLI.run(["inspect", path, "--json"])
            #expect(result.exitCode == 0)
            let json = result.json
            let tables = try #require(json["tables"] as? [String: Int])
            let declared = try #require(json["declaredCounts"] as? [String: Int])
            #expect(tables == declared)
            #expect(json["dialect"] as? String == "ios")
            let bytes = try #require(json["bytes"] as? [String: Int])
            #expect((bytes["uncompressed"] ?? 0) >= (bytes["compressed"] ?? 0))
            #expect(json["exportedAt"] as? String != nil && json["appVersion"] as? String != nil)
            if path == Repository.sampleFormat1 {
                #expect(json["formatVersion"] as? Int == 1 && json["compressed"] as? Bool == false)
                #expect(tables["readinessDailies"] == nil && (tables["cycleDays"] ?? 0) > 0)
            } else {
                #expect(json["formatVersion"] as? Int == 2 && json["compressed"] as? Bool == true)
                #expect((tables["readinessDailies"] ?? 0) > 0)
            }
        }
    }

    @Test("help, version and usage errors behave like swift-argument-parser")
    func commandLine() throws {
        let help = try CLI.run(["--help"])
        #expect(help.exitCode == 0 && help.stdout.contains("SUBCOMMANDS:") && help.stdout.contains("inspect"))
        let inspectHelp = try CLI.run(["inspect", "--help"])
        #expect(inspectHelp.exitCode == 0 && inspectHelp.stdout.contains("USAGE: pulse-archive inspect <file>"))
        #expect(inspectHelp.stdout.contains("ARGUMENTS:") && inspectHelp.stdout.contains("OPTIONS:"))
        let helpImport = try CLI.run(["help", "import"])
        #expect(helpImport.exitCode == 0 && helpImport.stdout.contains("USAGE: pulse-archive import <file>") && helpImport.stdout.contains("--merge"))
        for command in ["inspect", "export", "import", "verify", "readiness", "demo"] {
            let result = try CLI.run([command, "-h"])
            #expect(result.exitCode == 0 && result.stdout.hasPrefix("OVERVIEW: ") && result.stdout.contains("-h, --help"), "\(command)")
        }
        let version = try CLI.run(["--version"])
        #expect(version.exitCode == 0 && version.stdout.hasPrefix("pulse-archive "))
        for arguments in [["inspect"], ["inspect", "a", "b"], ["inspect", "a", "--bogus"], ["frobnicate"], [],
                          ["import", "a", "--replace", "--merge"], ["export", "--format-version", "3"], ["export", "--store"]] {
            let result = try CLI.run(arguments)
            #expect(result.exitCode == 64, "\(arguments)")
            #expect(result.stderr.hasPrefix("Error: ") && result.stderr.contains("\nUsage: "), "\(arguments): \(result.stderr)")
        }
    }
}

@Suite("export --json")
struct ExportJSONTests {
    @Test("export --json prints the contract's keys, and the path it wrote")
    func keys() throws {
        let dir = TemporaryDirectory()
        #expect(try CLI.run(["import", Repository.sampleFormat1, "--store", dir.file("s"), "--no-backfill"]).exitCode == 0)
        let result = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("e.json.gz"), "--json", "--format-version", "1"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let json = result.json
        #expect(json["path"] as? String == dir.file("e.json.gz") && json["formatVersion"] as? Int == 1)
        #expect((json["tables"] as? [String: Int])?["readinessDailies"] == nil && ((json["tables"] as? [String: Int])?["measurements"] ?? 0) > 0)
        let bytes = try #require(json["bytes"] as? [String: Int])
        #expect(bytes["compressed"] == Int(try FileManager.default.attributesOfItem(atPath: dir.file("e.json.gz"))[.size] as! UInt64))
        #expect((bytes["uncompressed"] ?? 0) > (bytes["compressed"] ?? 0))
    }
}
