import Foundation
import Testing
@testable import PulseArchive
import PulseSystem

/// A private directory removed when the value is released.
final class TemporaryDirectory {
    let path: String

    init() {
        var template = Array("\(NSTemporaryDirectory())pulse-archive-tests-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }!
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }

    @discardableResult
    func write(_ name: String, _ text: String) -> String { write(name, Data(text.utf8)) }

    @discardableResult
    func write(_ name: String, _ data: Data) -> String {
        let path = file(name)
        _ = FileManager.default.createFile(atPath: path, contents: data)
        return path
    }
}

/// The repository's files.
enum Repository {
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()
    static let sampleFormat1 = root + "/Archives/sample-format1.json"
    static let sampleFormat2 = root + "/Archives/sample-format2.json.gz"
    static let sampleAndroid = root + "/Archives/sample-android.json"
}

/// Content for the writer, held in memory (tests only: real exports stream from a store).
struct InMemoryContent: ArchiveContent {
    var rows: [String: [ArchiveRow]] = [:]
    var settings: [(String, String)] = []
    var attachments: [(String, [UInt8])] = []

    func rowCount(of table: ArchiveTable) throws -> Int { rows[table.key]?.count ?? 0 }
    func forEachRow(of table: ArchiveTable, _ body: (ArchiveRow) throws -> Void) throws {
        for row in rows[table.key] ?? [] { try body(row) }
    }
    func forEachSetting(_ body: (String, String) throws -> Void) throws {
        for (key, value) in settings.sorted(by: { utf8Precedes($0.0, $1.0) }) { try body(key, value) }
    }
    func forEachAttachment(_ body: (String, any PieceReadable) throws -> Void) throws {
        for (name, bytes) in attachments.sorted(by: { utf8Precedes($0.0, $1.0) }) { try body(name, bytes) }
    }
}

/// Collects everything a read delivers.
struct CollectingVisitor: ArchiveVisitor {
    var rows: [String: [ArchiveRow]] = [:]
    var settings: [String: String] = [:]
    var attachments: [String: [UInt8]] = [:]
    var extensions: [String: [String]] = [:]

    mutating func visitExtensionRow(_ table: ExtensionTable, row: JSONNode, at index: Int) throws {
        extensions[table.rawValue, default: []].append(row.compactText)
    }

    mutating func visit(row: ArchiveRow, at index: Int, of table: ArchiveTable) throws {
        rows[table.key, default: []].append(row)
    }
    mutating func visitSetting(key: String, value: String) throws { settings[key] = value }
    mutating func visitAttachment(name: String, contents: ArchiveBytes) throws { attachments[name] = try contents.collected() }
}

/// Rows that exercise every field of a table.
enum RowFactory {
    /// Every field set, with values that stress the dialect (non-ASCII, escapes, odd doubles).
    static func full(_ table: ArchiveTable, index: Int) -> ArchiveRow {
        var row = ArchiveRow(table: table)
        for (i, field) in table.fields.enumerated() {
            switch field.type {
            case .uuid: row[i] = .string(uuid(index * 100 + i))
            case .date: row[i] = .date(1_772_000_000_123 + Int64(index) * 86_400_000 + Int64(i) * 1_001)
            case .string:
                row[i] = .string(["Zoë's run / 🏃 \"fast\"\n\t\\ done", "ecg_future_raw", "", "Ωμέγα\u{0000}nul"][(index + i) % 4] + "#\(index)")
            case .int: row[i] = .int([0, -7, 9_007_199_254_740_993, Int64.min, Int64.max][(index + i) % 5])
            case .double: row[i] = .double([0.1, -2.5e-8, 1e21, 36.57, 1234567.0, -0.0][(index + i) % 6])
            case .bool: row[i] = .bool((index + i) % 2 == 0)
            }
        }
        if table == .activityBucketSamples { row[table.uniqueKeyIndex] = .int(1_771_826_400 + Int64(index) * 3600) }
        if table == .cycleDays { row[table.uniqueKeyIndex] = .string("2026-03-\(10 + index)") }
        return row
    }

    /// Only the required fields set.
    static func minimal(_ table: ArchiveTable, index: Int) -> ArchiveRow {
        var row = full(table, index: index)
        for (i, field) in table.fields.enumerated() where field.isOptional { row[i] = .null }
        return row
    }

    static func uuid(_ n: Int) -> String {
        let hex = String(format: "%012X", n)
        return "0A1B2C3D-4E5F-4A6B-8C7D-\(hex)"
    }

    /// Two rows per table: one full, one minimal.
    static func everyTable() -> InMemoryContent {
        var content = InMemoryContent()
        for table in ArchiveTable.all {
            content.rows[table.key] = [full(table, index: 1), minimal(table, index: 2)]
        }
        content.settings = [("pulseloop.metricprefs.v1", #"{"a":1, "b" : [true]}"#), (ArchiveFormat.readinessPrefsKey, " [1 ,2.50e1] ")]
        content.attachments = [("3F2504E0-4F89-11D3-9A0C-0305E82C3301.jpg", [0xFF, 0xD8, 0x00, 0x7F, 0xFF]), ("empty.bin", [])]
        return content
    }
}

/// Writes content to an archive file with the real writer.
func writeArchive(_ content: InMemoryContent, to path: String, compressed: Bool = true,
                  options: ArchiveWriterOptions = ArchiveWriterOptions(appVersion: "tests", exportedAt: 1_773_600_000_000)) throws {
    let file = try SystemFile.createExclusive(path)
    let sink = FileSink(file)
    try ArchiveWriter.write(content, options: options, to: compressed ? try GzipWriter(output: sink) : sink)
    try file.close()
}

/// Gzips bytes with the real writer; `keepsTo: nil` lets it write a decompression bomb.
func gzipped(_ bytes: [UInt8], to path: String, keepsTo: ArchiveLimits? = .standard) throws {
    let file = try SystemFile.createExclusive(path)
    let writer = try GzipWriter(output: FileSink(file), keepsTo: keepsTo)
    try bytes.withUnsafeBytes { try writer.write($0) }
    try writer.finish()
    try file.close()
}
