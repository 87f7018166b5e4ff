import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import PulseArchive
@testable import PulseArchiveCLI
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// The built binary's peak resident memory, as the kernel accounts it for that one process
/// (`wait4`'s `ru_maxrss`, read by GNU time): not a timing. Not `wait4` here: this test process
/// is large, and a child it spawns carries its high-water mark across `exec` into the child's
/// account; GNU time is small, so the binary it starts carries only its own.
enum PeakMemory {
    static let time = "/usr/bin/time"

    /// Runs `pulse-archive arguments` with its output discarded.
    /// - Returns: its exit status and its peak resident memory in bytes.
    static func run(_ arguments: [String]) throws -> (exitCode: Int32, peakBytes: Int) {
        let report = TemporaryDirectory()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: time)
        process.arguments = ["-f", "%M", "-o", report.file("peak"), CLI.executable] + arguments
        process.environment = ["TZ": "UTC", "PATH": "/usr/bin:/bin"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let text = try String(contentsOfFile: report.file("peak"), encoding: .utf8)
        // GNU time writes "Command exited with non-zero status N" first when it did.
        let kilobytes = try #require(text.split(separator: "\n").last.flatMap { Int($0) }, "GNU time wrote \(text)")
        return (process.terminationStatus, kilobytes * 1024)
    }
}

/// Whether this build runs under the address or thread sanitizer (the binary then does too).
let builtWithSanitizer = dlsym(nil, "__asan_init") != nil || dlsym(nil, "__tsan_init") != nil

/// docs/reliability.md, "Memory": every command stays under 150 MB whatever one value holds,
/// because each value held whole has a limit, and `verify` keeps a bounded number of problems.
///
/// Proven here at a scale: the limits a value is held whole under are divided by `scale`
/// (`--max-string-size`, `--max-object-size` on every command), and so is every input, so what
/// the binary holds for the values must shrink by the same factor. Peak = baseline (the binary's
/// peak on the small seed archive) + the fixed buffers a large archive fills whatever the limits
/// (`fixedBuffers`: read-ahead chunks, the queues between threads, SQLite's page caches of the
/// stores a verify or import opens) + what the values take, which grows linearly with the limits
/// (each value is held a fixed number of times). The bound is the baseline, the fixed buffers
/// and `scale`-th of what 150 MB leaves above both: a peak under it at this scale is a peak under
/// 150 MB at full scale. `scripts/bench.sh` measures the full-size values against 150 MB itself.
@Suite("Memory: bounded whatever one value holds", .disabled(if: builtWithSanitizer, "a sanitizer's runtime multiplies memory"))
struct MemoryBoundTests {
    static let fullBound = 150 << 20
    static let scale = 8
    static let limits = ArchiveLimits(maxStringBytes: ArchiveLimits.standard.maxStringBytes / scale,
                                      maxWholeValueBytes: ArchiveLimits.standard.maxWholeValueBytes / scale)
    /// The options that set the scaled limits, for every command.
    static let limitOptions = options(string: limits.maxStringBytes, object: limits.maxWholeValueBytes)
    static func options(string: Int, object: Int) -> [String] {
        ["--max-string-size", "\(string)", "--max-object-size", "\(object)"]
    }

    /// The binary's peak on the small format-2 seed: what it holds whatever the archive.
    static let baseline: Int = {
        let dir = TemporaryDirectory()
        let seed = dir.write("seed.json", JSONNode.object((try? Seeds.appObject()) ?? [:]).compactText)
        let peaks = [["inspect", seed, "-q"], ["verify", seed, "-q"]].map { (try? PeakMemory.run($0 + limitOptions).peakBytes) ?? 0 }
        return peaks.max() ?? 0
    }()

    /// Buffers that do not shrink with the limits: read-ahead (8 × 256 KiB), the visitor and
    /// compression queues (1 MiB each), SQLite's page caches (2 MiB per connection), zlib's.
    static let fixedBuffers = 12 << 20

    /// The scaled bound: the baseline, the fixed buffers, and `scale`-th of what 150 MB leaves
    /// above both.
    static var bound: Int { baseline + fixedBuffers + (fullBound - baseline - fixedBuffers) / scale }

    /// Runs each command on `archive` (and, for an archive that imports, export and
    /// `verify --store` of the store it makes), expecting `exitCode` and a peak under the bound.
    private func expectBounded(_ archive: String, exitCode: Int32, in dir: TemporaryDirectory, _ what: String) throws {
        var commands = [["inspect", archive, "-q"], ["verify", archive, "-q"], ["tables", archive, "-o", dir.file("tables-\(what)"), "-q"],
                        ["import", archive, "--store", dir.file("store-\(what)"), "-q"]]
        if exitCode == 0 {
            commands += [["export", "--store", dir.file("store-\(what)"), "-o", dir.file("\(what).json.gz"), "-q"],
                         ["tables", "--store", dir.file("store-\(what)"), "-o", dir.file("tables-store-\(what)"), "--format", "ndjson", "-q"],
                         ["verify", dir.file("\(what).json.gz"), "--store", dir.file("store-\(what)"), "-q"]]
        }
        #expect(Self.baseline > 0, "no baseline peak")
        for command in commands {
            let run = try PeakMemory.run(command + Self.limitOptions)
            #expect(run.exitCode == exitCode, "\(what): \(command[0]) exited \(run.exitCode)")
            #expect(run.peakBytes <= Self.bound, "\(what): \(command[0]) peaked at \(run.peakBytes >> 10) KB, over the scaled bound of \(Self.bound >> 10) KB (baseline \(Self.baseline >> 10) KB)")
        }
    }

    /// The format-2 seed with `count` measurements, copies of its first with ids of their own.
    static func withMeasurements(_ count: Int) throws -> [ByteKey: JSONNode] {
        var object = try Seeds.appObject()
        let first = try #require(object["measurements"]?.arrayValue?.first?.objectValue)
        object["measurements"] = .array((0..<count).map { i in
            var row = first
            row["id"] = .string(RowFactory.uuid(10_000 + i))
            return .object(row)
        })
        var counts = try #require(object["counts"]?.objectValue)
        counts["measurements"] = .number("\(count)")
        object["counts"] = .object(counts)
        return object
    }

    private func write(_ object: [ByteKey: JSONNode], _ name: String, in dir: TemporaryDirectory) -> String {
        dir.write(name, JSONNode.object(object).compactText)
    }

    @Test("the longest string, the largest attachment and the largest document each command accepts: under the bound for every command")
    func largestValues() throws {
        let dir = TemporaryDirectory()
        var object = try Seeds.appObject()
        try ClosureArchives.set(&object, "coachMessages", "body", .string(String(repeating: "x", count: Self.limits.maxStringBytes - 16)))
        try expectBounded(write(object, "string.json", in: dir), exitCode: 0, in: dir, "string")

        object = try Seeds.appObject()
        var random = SeededRandom.fromEnvironment("\(#function)")
        let bytes = (0..<Self.limits.maxBase64PayloadBytes).map { _ in UInt8.random(in: 0...255, using: &random) }
        let encoded = ByteBuffer.collecting { Base64.encode(bytes, appendingTo: &$0) }
        object["attachments"] = .array([.object(["file": .string("large.jpg"), "base64": .string(String(decoding: encoded, as: UTF8.self))])])
        try expectBounded(write(object, "attachment.json", in: dir), exitCode: 0, in: dir, "attachment")

        // About the most values a document can hold: a flat array of zeros, 1.5 MB compact and
        // about 5 MB as the app's indented file, which must fit the 6 MiB a file can carry (at
        // full scale; divided by `scale` here).
        object = try Seeds.appObject()
        let zeros = JSONNode.array(Array(repeating: .number("0"), count: Self.limits.maxBase64PayloadBytes / 8))
        object["documents"] = .array([.object(["path": .string("Splits/01J0000000000000000000000A.json"),
                                               "document": .object(["schemaVersion": .number("3"), "x": zeros])])])
        object["documentStubs"] = .array([])
        object["documentFiles"] = .array([])
        try expectBounded(write(object, "document.json", in: dir), exitCode: 0, in: dir, "document")
    }

    @Test("a value past its limit is refused by name, in bounded memory, and the option raises the limit")
    func pastTheLimits() throws {
        let dir = TemporaryDirectory()
        // A document of nested arrays five times the whole-value limit (it took 700 MB per 20 MB).
        var object = try Seeds.appObject()
        let nested = JSONNode.array(Array(repeating: .array([.number("0")]), count: 5 * Self.limits.maxWholeValueBytes / 4))
        object["documents"] = .array([.object(["path": .string("Splits/01J0000000000000000000000A.json"),
                                               "document": .object(["schemaVersion": .number("3"), "x": nested])])])
        object["documentStubs"] = .array([])
        object["documentFiles"] = .array([])
        let document = write(object, "document.json", in: dir)
        try expectBounded(document, exitCode: 1, in: dir, "document")
        let refused = try CLI.run(["inspect", document] + Self.limitOptions)
        #expect(refused.exitCode == 1 && refused.stderr.contains("documents[0].document: its JSON passes the limit of \(Self.limits.maxWholeValueBytes) bytes")
                && refused.stderr.contains("--max-object-size raises the limit"), "\(refused.stderr)")
        let raised = try CLI.run(["inspect", document] + Self.options(string: Self.limits.maxStringBytes, object: (16 << 20) / Self.scale))
        #expect(!raised.stderr.contains("passes the limit of"), "\(raised.stderr)")

        // An Android row and a meal row held whole, past the limit.
        var android = try Seeds.androidObject()
        try ClosureArchives.set(&android, "measurements", "padding", .array(Array(repeating: .number("1"), count: Self.limits.maxWholeValueBytes / 2)))
        let row = try CLI.run(["inspect", write(android, "android.json", in: dir)] + Self.limitOptions)
        #expect(row.exitCode == 1 && row.stderr.contains("measurements[0]: its JSON passes the limit"), "\(row.stderr)")
        android = try Seeds.androidObject()
        try ClosureArchives.set(&android, "mealEntries", "notes", .array(Array(repeating: .number("1"), count: Self.limits.maxWholeValueBytes / 2)))
        let meal = try CLI.run(["verify", write(android, "meal.json", in: dir)] + Self.limitOptions)
        #expect(meal.exitCode == 1 && meal.stdout.contains("mealEntries[0]: its JSON passes the limit"), "\(meal.stdout)")

        // A string one byte past the limit, and the option that lets it through.
        object = try Seeds.appObject()
        try ClosureArchives.set(&object, "coachMessages", "body", .string(String(repeating: "x", count: Self.limits.maxStringBytes + 1)))
        let long = write(object, "long.json", in: dir)
        let refusedString = try CLI.run(["import", long, "--store", dir.file("s")] + Self.limitOptions)
        #expect(refusedString.exitCode == 1 && refusedString.stderr.contains("--max-string-size raises the limit"), "\(refusedString.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("s")))
        let raisedLimits = Self.options(string: (13 << 20) / Self.scale, object: Self.limits.maxWholeValueBytes)
        let imported = try CLI.run(["import", long, "--store", dir.file("s"), "--no-backfill"] + raisedLimits)
        #expect(imported.exitCode == 0, "\(imported.stderr)")
        // The store now holds a value the default limits refuse: export says so by name and
        // writes nothing, and with the same option it writes an archive that reads back with it.
        let export = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("e.json.gz")] + Self.limitOptions)
        #expect(export.exitCode == 1 && export.stderr.contains("coachMessages") && !FileManager.default.fileExists(atPath: dir.file("e.json.gz")), "\(export.stderr)")
        let raisedExport = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("e.json.gz")] + raisedLimits)
        #expect(raisedExport.exitCode == 0, "\(raisedExport.stderr)")
        let verified = try CLI.run(["verify", dir.file("e.json.gz"), "--store", dir.file("s")] + raisedLimits)
        #expect(verified.exitCode == 0, "\(verified.stdout)")
    }

    @Test("many values at the limits, one after another: ten strings at the string limit, one of control characters (six times as long escaped), sixty unknown keys of an eighth of the string limit")
    func manyLargeValues() throws {
        let dir = TemporaryDirectory()
        var object = try Self.withMeasurements(60)
        let long = String(repeating: "x", count: Self.limits.maxStringBytes - 16)
        for row in 0..<10 { try ClosureArchives.set(&object, "measurements", row: row, "unit", .string(long)) }
        // Rows wait between the reader's thread and the worker's counted by their text, not
        // as rows: ten such rows were one batch (250 MB at full scale).
        try expectBounded(write(object, "strings.json", in: dir), exitCode: 0, in: dir, "strings")

        object = try Seeds.appObject()
        try ClosureArchives.set(&object, "coachMessages", "body", .string(String(repeating: "\u{1}", count: Self.limits.maxStringBytes - 16)))
        try expectBounded(write(object, "escaped.json", in: dir), exitCode: 0, in: dir, "escaped")

        object = try Self.withMeasurements(60)
        var rows = try #require(object["measurements"]?.arrayValue)
        for row in 0..<60 {
            var members = try #require(rows[row].objectValue)
            members[ByteKey("\(row)" + String(repeating: "k", count: Self.limits.maxStringBytes / 8))] = .number("0")
            rows[row] = .object(members)
        }
        object["measurements"] = .array(rows)
        let names = write(object, "names.json", in: dir)
        for command in ["inspect", "verify"] {
            let run = try PeakMemory.run([command, names, "-q"] + Self.limitOptions)
            #expect(run.exitCode == 0 && run.peakBytes <= Self.bound, "long names: \(command) exited \(run.exitCode), peaked at \(run.peakBytes >> 20) MB")
        }
        let warned = try CLI.run(["inspect", names, "-q"] + Self.limitOptions)
        #expect(warned.stderr.contains("60 more unknown fields") && warned.stderr.utf8.count < 10_000, "\(warned.stderr.prefix(300))")
    }

    @Test("names are keys, bounded: a settings key or attachment name past 1 KiB is refused by import and verify, by name")
    func longNames() throws {
        let dir = TemporaryDirectory()
        var object = try Seeds.appObject()
        var settings = try #require(object["settings"]?.objectValue)
        settings[ByteKey(String(repeating: "s", count: ArchiveLimits.maxNameBytes + 1))] = .string("{}")
        object["settings"] = .object(settings)
        let key = write(object, "key.json", in: dir)
        let imported = try CLI.run(["import", key, "--store", dir.file("s")])
        #expect(imported.exitCode == 1 && imported.stderr.contains("settings key of 1025 bytes") && !FileManager.default.fileExists(atPath: dir.file("s")), "\(imported.stderr.prefix(400))")
        object = try Seeds.appObject()
        object["attachments"] = .array([.object(["file": .string(String(repeating: "a", count: 5_000) + ".jpg"), "base64": .string("AAAA")])])
        let verified = try CLI.run(["verify", write(object, "name.json", in: dir)])
        #expect(verified.exitCode == 1 && verified.stdout.contains("attachment name of 5004 bytes"), "\(verified.stdout.suffix(400))")
    }

    @Test("a meal row that fits as read but not as written back (every / becomes \\/) is refused by import, so the store can always be exported")
    func mealWrittenBack() throws {
        let dir = TemporaryDirectory()
        var android = try Seeds.androidObject()
        try ClosureArchives.set(&android, "mealEntries", "name", .string(String(repeating: "/", count: Self.limits.maxWholeValueBytes * 2 / 3)))
        // As the port writes it: `/` unescaped (our writer, as the app, writes `\/`).
        let file = dir.write("meal.json", JSONNode.object(android).compactText.replacingOccurrences(of: "\\/", with: "/"))
        let imported = try CLI.run(["import", file, "--store", dir.file("s")] + Self.limitOptions)
        #expect(imported.exitCode == 1 && imported.stderr.contains("mealEntries[0] (as written back)") && !FileManager.default.fileExists(atPath: dir.file("s")), "\(imported.stderr.prefix(400))")
        let raisedLimits = Self.options(string: Self.limits.maxStringBytes, object: (8 << 20) / Self.scale)
        let raised = try CLI.run(["import", file, "--store", dir.file("s"), "--no-backfill"] + raisedLimits)
        #expect(raised.exitCode == 0, "\(raised.stderr)")
        let export = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("e.json.gz")] + raisedLimits)
        #expect(export.exitCode == 0, "\(export.stderr)")
        let refused = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("f.json.gz")] + Self.limitOptions)
        #expect(refused.exitCode == 1 && refused.stderr.contains("mealEntries[0]") && refused.stderr.contains("--max-object-size"), "\(refused.stderr.prefix(400))")

        // 16 bytes under the limit as the port writes it, past it as the app's row: its epoch
        // milliseconds become ISO dates. It was imported, and then no export could carry it.
        android = try Seeds.androidObject()
        try ClosureArchives.set(&android, "mealEntries", "name", .string(""))
        let row = try #require(android["mealEntries"]?.arrayValue?.first)
        try ClosureArchives.set(&android, "mealEntries", "name", .string(String(repeating: "a", count: Self.limits.maxWholeValueBytes - 16 - row.compactText.utf8.count)))
        let dated = try CLI.run(["import", write(android, "dated.json", in: dir), "--store", dir.file("t")] + Self.limitOptions)
        #expect(dated.exitCode == 1 && dated.stderr.contains("mealEntries[0] (as written back)") && !FileManager.default.fileExists(atPath: dir.file("t")), "\(dated.stderr.prefix(400))")
    }

    @Test("verify of a file with an error in each of 200 000 / scale rows: the first 100 listed, the rest counted, memory bounded")
    func manyProblems() throws {
        let dir = TemporaryDirectory()
        let rows = 200_000 / Self.scale
        var text = Array(#"{"formatVersion":2,"exportedAt":"2026-03-01T00:00:00.000Z","appVersion":"t","measurements":["#.utf8)
        for i in 0..<rows {
            if i > 0 { text.append(0x2C) }
            text += Array(#"{"id":"\#(RowFactory.uuid(i))","kindRaw":"heartRate","value":"not a number","unit":"bpm","timestamp":"2026-03-01T00:00:00.000Z","sourceRaw":"ring","confidenceRaw":"known","createdAt":"2026-03-01T00:00:00.000Z"}"#.utf8)
        }
        text += Array("]}".utf8)
        let file = dir.file("errors.json")
        #expect(FileManager.default.createFile(atPath: file, contents: Data(text)))
        let run = try PeakMemory.run(["verify", file, "-q"] + Self.limitOptions)
        #expect(run.exitCode == 1 && run.peakBytes <= Self.bound, "verify exited \(run.exitCode), peaked at \(run.peakBytes >> 20) MB")
        let json = try CLI.run(["verify", file, "--json", "-q"]).json
        let problems = json["problems"] as? [[String: Any]] ?? []
        let measurementErrors = problems.filter { $0["table"] as? String == "measurements" }.count
        let omitted = (json["omittedProblems"] as? [String: Int])?["measurements"] ?? 0
        #expect(measurementErrors == 100 && omitted >= rows - 100 && json["errors"] as? Int == problems.filter { $0["severity"] as? String == "error" }.count + omitted,
                "\(measurementErrors) listed, \(omitted) omitted, \(json["errors"] ?? "nil") errors")
        let text2 = try CLI.run(["verify", file, "-q"])
        #expect(text2.stdout.contains("… and \(ProgressLine.grouped(omitted)) more problems in measurements"), "\(text2.stdout.suffix(600))")
        #expect(text2.stdout.utf8.count < 100_000, "the text report is bounded: \(text2.stdout.utf8.count) bytes")
    }

    /// The seed with `count` names of a kilobyte of one kind, each given once.
    private func withNames(_ kind: String, _ count: Int, in dir: TemporaryDirectory) throws -> String {
        var object = try Seeds.appObject()
        var settings = try #require(object["settings"]?.objectValue)
        var attachments = try #require(object["attachments"]?.arrayValue)
        var counts = try #require(object["counts"]?.objectValue)
        let padding = String(repeating: "k", count: 1_000)
        var entry: [ByteKey: JSONNode] = ["file": .string("members.jpg"), "base64": .string("QQ==")]
        for i in 0..<count {
            let name = kind + String(format: "%07d", i) + padding
            switch kind {
            case "settings": settings[ByteKey(name)] = .string("1")
            case "attachments": attachments.append(.object(["file": .string(name + ".jpg"), "base64": .string("QQ==")]))
            case "unknown": object[ByteKey(name)] = .number("1")
            case "members": entry[ByteKey(name)] = .number("1")
            default: counts[ByteKey(name)] = .number("1")
            }
        }
        if kind == "members" { attachments.append(.object(entry)) }
        counts["attachments"] = .number("\(attachments.count)")
        object["settings"] = .object(settings)
        object["attachments"] = .array(attachments)
        object["counts"] = .object(counts)
        return write(object, "\(kind)-\(count).json", in: dir)
    }

    @Test("names, each given once (settings keys, attachment names, unknown top-level keys, counts names of no table, unknown members of one attachment entry): twice as many cost a fraction of their bytes, not the bytes again (reviews h97, h98: 200 000 of a kilobyte took inspect to 256–680 MB, verify to 482 MB)",
          arguments: ["settings", "attachments", "unknown", "counts", "members"])
    func manyDistinctNames(_ kind: String) throws {
        let dir = TemporaryDirectory()
        let names = 25_000
        let small = try withNames(kind, names, in: dir), large = try withNames(kind, 2 * names, in: dir)
        var commands = [["inspect"], ["verify"]]
        if kind == "settings" { commands += [["diff"], ["import", "--no-backfill", "--store"]] }
        for command in commands {
            func peak(_ archive: String) throws -> Int {
                let arguments = command[0] == "diff" ? ["diff", archive, archive]
                    : command[0] == "import" ? command + [dir.file("store-\(UUID().uuidString)"), archive] : command + [archive]
                let run = try PeakMemory.run(arguments)
                #expect(run.exitCode == 0, "\(kind): \(command[0]) exited \(run.exitCode)")
                return run.peakBytes
            }
            // Once the fixed buffers (SQLite's page caches) are full, what grows is what each name costs.
            let growth = try peak(large) - peak(small)
            #expect(growth < names * 1_000 / 2, "\(kind): \(command[0]) grew by \(growth >> 10) KB for \(names) more names of a kilobyte")
        }
        if kind == "unknown" || kind == "counts" {
            // Past the longest named (256 bytes): none named, every one counted, in one line.
            let inspect = try CLI.run(["inspect", large])
            let counted = kind == "unknown" ? "\(2 * names) more unknown top-level keys (ignored)" : "counts names \(2 * names) more that are no table (ignored)"
            #expect(inspect.stderr.contains(counted) && inspect.stderr.utf8.count < 10_000, "\(inspect.stderr.suffix(400))")
        }
    }

    @Test("a row with 300 000 / scale different unknown fields: 50 named in the warnings, the rest counted")
    func manyUnknownFields() throws {
        let dir = TemporaryDirectory()
        var object = try Seeds.appObject()
        var rows = try #require(object["measurements"]?.arrayValue)
        var row = try #require(rows[0].objectValue)
        let fields = 300_000 / Self.scale
        for i in 0..<fields { row[ByteKey("unknown\(i)")] = .number("0") }
        rows[0] = .object(row)
        object["measurements"] = .array(rows)
        let file = write(object, "unknown.json", in: dir)
        let run = try PeakMemory.run(["verify", file, "-q"] + Self.limitOptions)
        #expect(run.exitCode == 0 && run.peakBytes <= Self.bound, "verify exited \(run.exitCode), peaked at \(run.peakBytes >> 20) MB")
        let inspect = try CLI.run(["inspect", file, "-q"])
        let named = inspect.stderr.split(separator: "\n").filter { $0.contains("unknown field \"unknown") }.count
        #expect(named == NameTally.namedLimit && inspect.stderr.contains("\(fields - NameTally.namedLimit) more unknown fields"), "\(inspect.stderr.suffix(400))")
    }
}
