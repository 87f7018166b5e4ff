import Foundation
import Testing
@testable import PulseArchive
@testable import PulseTestSupport

@Suite("Archive round trips")
struct RoundTripTests {
    @Test("every table and field, nil and present, survive write → read exactly", arguments: [true, false])
    func everyField(compressed: Bool) throws {
        let dir = TemporaryDirectory()
        let content = RowFactory.everyTable()
        let path = dir.file(compressed ? "all.json.gz" : "all.json")
        try writeArchive(content, to: path, compressed: compressed)

        var visitor = CollectingVisitor()
        let summary = try ArchiveReader(path: path).read(into: &visitor)
        #expect(summary.formatVersion == 2)
        #expect(summary.isCompressed == compressed)
        #expect(summary.warnings.isEmpty)
        for table in ArchiveTable.all {
            #expect(visitor.rows[table.key] == content.rows[table.key], "table \(table.key)")
            #expect(summary.declaredCount(of: table.key) == 2)
        }
        #expect(visitor.settings == Dictionary(uniqueKeysWithValues: content.settings))
        #expect(visitor.attachments == Dictionary(uniqueKeysWithValues: content.attachments))
    }

    @Test("the writer refuses, by table, row and field, a UUID field the reader would refuse, and writes one of either case upper-case")
    func uuidFieldsTheReaderRefuses() throws {
        let encoding = RowEncoding(table: .measurements)
        let id = ArchiveTable.measurements.fields.firstIndex { $0.name == "id" }!
        for bad in ["not-a-uuid", "", "0A1B2C3D-4E5F-4A6B-8C7D-00000000000G", "0A1B2C3D-4E5F-4A6B-8C7D-0000000000000",
                    "0A1B2C3Dx4E5F-4A6B-8C7D-000000000000", "0A1B2C3D-4E5F-4A6B-8C7D-00000000000é"] {
            var row = RowFactory.full(.measurements, index: 0)
            row[id] = .string(bad)
            var out = ByteBuffer()
            #expect(throws: ArchiveError.self, "\(bad.debugDescription)") { try encoding.append(row, index: 4, to: &out) }
            do { try encoding.append(row, index: 4, to: &out) } catch {
                #expect("\(error)".contains("measurements[4].id: cannot be exported: \(bad.debugDescription) is not a UUID"), "\(error)")
            }
        }
        var row = RowFactory.full(.measurements, index: 0)
        row[id] = .string("abcdef01-2345-6789-abcd-ef0123456789")
        let out = try ByteBuffer.collecting { try encoding.append(row, index: 0, to: &$0) }
        #expect(String(decoding: out, as: UTF8.self).contains(#""id":"ABCDEF01-2345-6789-ABCD-EF0123456789""#))
    }

    @Test("format 1 leaves out readinessDailies and keeps cycleDays")
    func formatOne() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("v1.json.gz")
        try writeArchive(RowFactory.everyTable(), to: path,
                         options: ArchiveWriterOptions(formatVersion: 1, appVersion: "t", exportedAt: 0))
        let summary = try ArchiveReader(path: path).inspect()
        #expect(summary.formatVersion == 1)
        #expect(summary.rowsFound["readinessDailies"] == nil)
        #expect(summary.declaredCounts["readinessDailies"] == nil)
        #expect(summary.rowsFound["cycleDays"] == 2)
    }

    @Test("the writer's gzip is read by the system gzip, and the system gzip's by the reader")
    func gzipInterop() throws {
        let dir = TemporaryDirectory()
        let ours = dir.file("ours.json.gz")
        try writeArchive(RowFactory.everyTable(), to: ours)
        let gunzip = Process()
        gunzip.executableURL = URL(fileURLWithPath: "/bin/sh")
        gunzip.arguments = ["-c", "gzip -dc '\(ours)' > '\(dir.file("plain.json"))' && gzip -6 -c '\(dir.file("plain.json"))' > '\(dir.file("theirs.json.gz"))'"]
        try gunzip.run()
        gunzip.waitUntilExit()
        #expect(gunzip.terminationStatus == 0)
        let plain = try ArchiveReader(path: dir.file("plain.json")).inspect()
        let theirs = try ArchiveReader(path: dir.file("theirs.json.gz")).inspect()
        #expect(plain.rowsFound == theirs.rowsFound)
        #expect(theirs.isCompressed && !plain.isCompressed)
        #expect(theirs.rowsFound["measurements"] == 2)
    }

    @Test("keys in any order, whitespace, a byte-order mark, upper- and lower-case UUIDs, null optionals")
    func tolerantReading() throws {
        let dir = TemporaryDirectory()
        let tables = ArchiveTable.all.filter(\.isRequired).map { "\"\($0.key)\" : [ ]" }.joined(separator: ",\n  ")
        let text = """
            \u{FEFF}  {
              "measurements" : [ {
                "value" : 61.5, "unit" : "bpm", "kindRaw" : "hr", "timestamp" : "2026-03-01T01:02:03+01:00",
                "id" : "3f2504e0-4f89-11d3-9a0c-0305e82c3301", "sourceRaw" : "ring", "confidenceRaw" : "known",
                "createdAt" : "2026-03-01T00:02:03.5Z", "activitySessionId" : null, "someFutureField" : {"deep": [1, 2, {"x": null}]}
              } ],
              \(tables.replacingOccurrences(of: "\"measurements\" : [ ],", with: "")),
              "settings" : { }, "attachments" : [ ], "counts" : { "measurements" : 1 },
              "appVersion" : "1.0", "exportedAt" : "2026-03-01T00:00:00Z", "formatVersion" : 1
            }
            """
        let path = dir.write("loose.json", text)
        var visitor = CollectingVisitor()
        let summary = try ArchiveReader(path: path).read(into: &visitor)
        let row = try #require(visitor.rows["measurements"]?.first)
        let table = ArchiveTable.measurements
        #expect(row[table.fieldIndex("id")!] == .string("3F2504E0-4F89-11D3-9A0C-0305E82C3301"))
        #expect(row[table.fieldIndex("timestamp")!] == .date(ArchiveDate.parse("2026-03-01T00:02:03Z")!))
        #expect(row[table.fieldIndex("createdAt")!] == .date(ArchiveDate.parse("2026-03-01T00:02:03.500Z")!))
        #expect(row[table.fieldIndex("activitySessionId")!] == .null)
        #expect(summary.warnings.map(\.message) == [#"measurements: unknown field "someFutureField" in 1 row (ignored)"#])
    }

    @Test("leading whitespace of any length (4 KiB and more: past the bytes the sniff reads) before a plain archive, a byte-order mark before it too; whitespace alone is a file cut short")
    func longLeadingWhitespace() throws {
        let dir = TemporaryDirectory()
        let archive = try Data(contentsOf: URL(fileURLWithPath: Repository.sampleFormat1))
        let expected = try ArchiveReader(path: Repository.sampleFormat1).inspect().rowsFound
        for (count, mark) in [(4_095, false), (4_096, false), (4_097, true), (70_000, true)] {
            let lead = Data(mark ? [0xEF, 0xBB, 0xBF] : []) + Data(repeating: UInt8(ascii: count % 2 == 0 ? " " : "\n"), count: count)
            let path = dir.file("lead-\(count).json")
            try (lead + archive).write(to: URL(fileURLWithPath: path))
            let summary = try ArchiveReader(path: path).inspect()
            #expect(summary.rowsFound == expected && !summary.isCompressed, "\(count) bytes of whitespace")
        }
        let blank = dir.write("blank.json", String(repeating: " ", count: 5_000))
        #expect(throws: ArchiveError.self) { try ArchiveReader(path: blank).inspect() }
        do { _ = try ArchiveReader(path: blank).inspect() } catch {
            #expect("\(error)".contains("ends early at byte 5000"), "\(error)")
        }
    }

    @Test("the golden sample archives read: format 1 plain with cycleDays, format 2 gzip with readiness")
    func goldenSamples() throws {
        let one = try ArchiveReader(path: Repository.sampleFormat1).inspect()
        #expect(one.formatVersion == 1 && !one.isCompressed)
        #expect(one.rowsFound["readinessDailies"] == nil)
        #expect((one.rowsFound["cycleDays"] ?? 0) > 0)
        #expect((one.rowsFound["measurements"] ?? 0) > 1000)
        #expect(one.warnings.isEmpty)
        let two = try ArchiveReader(path: Repository.sampleFormat2).inspect()
        #expect(two.formatVersion == 2 && two.isCompressed)
        #expect((two.rowsFound["readinessDailies"] ?? 0) > 0)
        #expect(two.attachmentsCount == 1 && two.settingsCount == 4)
        for table in ArchiveTable.all where table != .readinessDailies {
            #expect(one.rowsFound[table.key].map { $0 > 0 } == true, "format 1 sample has rows in \(table.key)")
        }
        #expect(two.countMismatches.isEmpty && one.countMismatches.isEmpty)
    }
}
