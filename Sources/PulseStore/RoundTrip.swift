import PulseArchive
import PulseDocuments

/// What one step of the round trip carries: the rows of a table or of an extension table.
enum RoundTripSection: Equatable {
    case table(ArchiveTable)
    case extensionTable(ExtensionTable)

    var name: String {
        switch self {
        case .table(let table): return table.key
        case .extensionTable(let table): return table.rawValue
        }
    }
}

/// `verify`'s round trip, a batch at a time. Rows go into a temporary store through the
/// import's own row writer, come out again through the exporter into an archive in memory,
/// are read back by the reader and compared with the rows as the archive first gave them.
/// Settings, attachments and documents make the last step. The temporary store never holds
/// more than one batch of rows, so memory and disk stay flat however large the archive, and
/// every row still crosses the same code an import and an export run.
final class RollingRoundTrip {
    /// Rows per step: large enough that a step's fixed cost (an archive envelope) vanishes,
    /// small enough to stay a few megabytes.
    static let batchSize = 8192

    /// The temporary store's database (`StoreSchema.roundTripTables`) and document tree.
    let database: SQLiteDatabase
    let tree: String
    private let writer: StoreRowWriter
    /// With `verify --store`: the store, compared one batch at a time.
    let comparison: StoreComparison?
    private var section: RoundTripSection?
    private var expected = RoundTripComparer.Expected()
    /// Values that did not come back as they were read, per table, `settings`, `attachments`,
    /// `documents`.
    private(set) var differences: [String: Int] = [:]
    /// Why the round trip stopped before the end: a row the temporary store refused, or an
    /// export the reader refused.
    private(set) var failure: String?

    /// - Parameter storePath: the database of the store to compare with (`verify --store`).
    /// - Parameter directory: a new private directory for the temporary store.
    init(directory: String, comparingWith storePath: String?) throws {
        try PrivateFiles.createDirectory(directory)
        tree = directory + "/tree"
        try PrivateFiles.createDirectory(tree)
        try PrivateFiles.touch(directory + "/store.sqlite")
        let database = try SQLiteDatabase(path: directory + "/store.sqlite", create: false)
        try PulseStore.configure(database, durable: false)
        for sql in StoreSchema.roundTripTables { try database.execute(sql) }
        self.database = database
        writer = try StoreRowWriter(database: database)
        comparison = try storePath.map { try StoreComparison(database: database, storePath: $0) }
        try database.execute("BEGIN")
    }

    /// Starts a section (ending the one before).
    func begin(_ next: RoundTripSection) throws {
        guard next != section else { return }
        try flush()
        section = next
    }

    /// Ends the current section.
    func end() throws {
        try flush()
        section = nil
    }

    /// Adds a row of the current section. A repeated key is left out (the key check reports it).
    func add(_ row: ArchiveRow, of table: ArchiveTable, at index: Int) throws {
        guard failure == nil else { return }
        do {
            try writer.add(row, to: table)
        } catch let error as SQLiteStatement.StepError where error.isUniqueViolation {
            return
        } catch {
            failure = "round trip: \(table.key)[\(index)] could not be restored: \(ArchiveVerifier.describe(error))"
            return
        }
        expected.rows.append(row)
        if expected.rows.count >= Self.batchSize { try flush() }
    }

    func addExtensionRow(_ row: JSONNode, of table: ExtensionTable, at index: Int) throws {
        guard failure == nil else { return }
        try begin(.extensionTable(table))
        do {
            try writer.addExtensionRow(row, to: table)
        } catch let error as SQLiteStatement.StepError where error.isUniqueViolation {
            return
        }
        expected.extensionRows.append(row)
        if expected.extensionRows.count >= Self.batchSize { try flush() }
    }

    /// - Returns: false when the key was already set (the archive repeats it).
    func addSetting(_ key: String, _ value: String) throws -> Bool {
        do {
            try writer.setSetting(key, value)
        } catch let error as SQLiteStatement.StepError where error.isUniqueViolation {
            return false
        }
        expected.settings[key] = value
        return true
    }

    /// - Returns: false when the name was already used (the archive repeats it).
    func addAttachment(_ name: String, _ contents: [UInt8]) throws -> Bool {
        do {
            try writer.addAttachment(name, contents)
        } catch let error as SQLiteStatement.StepError where error.isUniqueViolation {
            return false
        }
        expected.attachments[name] = SHA1.hash(contents)
        return true
    }

    /// Writes a document file into the temporary store's tree, as an import stages it.
    func addDocument(_ path: DocumentPath, bytes: [UInt8]) throws {
        try StoreDocuments.writeFile(bytes, at: path.path, under: tree)
        expected.documents[path.path] = SHA1.hash(bytes)
    }

    /// The last step: settings, attachments and documents; with `--store`, what is left to count.
    func finish() throws {
        try end()
        try readBack(RoundTripContent(store: StoreContent(
            database: database, schema: "main",
            documents: StoreDocuments.Content(tree: try DocumentTree(scanning: tree))), section: nil))
        try comparison?.compareSettingsAndAttachments()
        try database.execute("COMMIT")
    }

    /// Compares (with `--store`), exports and reads back the batch, then empties its table.
    private func flush() throws {
        guard let section, !expected.rows.isEmpty || !expected.extensionRows.isEmpty else { return }
        try comparison?.compareBatch(of: section.name)
        if failure == nil {
            switch section {
            case .table(let table): try compareRows(of: table)
            case .extensionTable: try readBack(RoundTripContent(store: StoreContent(database: database, schema: "main"), section: section))
            }
        }
        try database.execute("DELETE FROM \(StoreSchema.quoted(section.name))")
        expected.rows.removeAll(keepingCapacity: true)
        expected.extensionRows.removeAll(keepingCapacity: true)
    }

    /// The batch of `table` read back with the exporter's query, in order, each column
    /// compared with the row as read (`SQLiteStatement.column(_:as:holds:)`, the exporter's
    /// reading without building strings). The export writes what it reads here; `RowTextCheck`
    /// made sure that the text of these values reads back as they are.
    private func compareRows(of table: ArchiveTable) throws {
        let select = try database.cached(StoreSchema.selectAll(table))
        defer { select.reset() }
        let types = table.fields.map(\.type)
        var position = 0, changed = 0
        while try select.step() {
            if position >= expected.rows.count {
                changed += 1
            } else {
                let row = expected.rows[position]
                for (i, type) in types.enumerated() where !select.column(Int32(i), as: type, holds: row[i]) {
                    changed += 1
                    break
                }
            }
            position += 1
        }
        changed += max(0, expected.rows.count - position)
        if changed > 0 { differences[table.key, default: 0] += changed }
    }

    private func readBack(_ content: RoundTripContent) throws {
        guard failure == nil else { return }
        let exported = MemorySink()
        var comparer = RoundTripComparer(expected: expected, section: content.section)
        do {
            try ArchiveWriter.write(content, options: ArchiveWriterOptions(appVersion: "verify", exportedAt: 0), to: exported)
            try ArchiveReader(bytes: exported.bytes, name: "the round-trip export").read(into: &comparer)
        } catch {
            failure = "round trip: the restored \(content.section?.name ?? "settings, attachments and documents") could not be exported and read back: \(ArchiveVerifier.describe(error))"
            return
        }
        comparer.finish()
        differences.merge(comparer.differences, uniquingKeysWith: +)
    }
}

/// The temporary store as the exporter sees it in one step of the round trip: the rows of one
/// section, or (the last step, `section` nil) the settings, attachments and documents.
struct RoundTripContent: ArchiveContent {
    let store: StoreContent
    let section: RoundTripSection?

    var hasDocuments: Bool { section == nil && store.hasDocuments }

    func rowCount(of table: ArchiveTable) throws -> Int {
        section == .table(table) ? try store.rowCount(of: table) : 0
    }

    func forEachRow(of table: ArchiveTable, _ body: (ArchiveRow) throws -> Void) throws {
        if section == .table(table) { try store.forEachRow(of: table, body) }
    }

    func extensionRowCount(_ table: ExtensionTable) throws -> Int {
        section == .extensionTable(table) ? try store.extensionRowCount(table) : 0
    }

    func forEachExtensionRow(_ table: ExtensionTable, _ body: (JSONNode) throws -> Void) throws {
        if section == .extensionTable(table) { try store.forEachExtensionRow(table, body) }
    }

    func forEachSetting(_ body: (String, String) throws -> Void) throws {
        if section == nil { try store.forEachSetting(body) }
    }

    func forEachAttachment(_ body: (String, [UInt8]) throws -> Void) throws {
        if section == nil { try store.forEachAttachment(body) }
    }

    func forEachDocument(stubs: Bool, _ body: (DocumentPath, JSONNode, [UInt8]?) throws -> Void) throws {
        try store.forEachDocument(stubs: stubs, body)
    }

    func forEachDocumentFile(_ body: (DocumentPath, [UInt8]) throws -> Void) throws {
        try store.forEachDocumentFile(body)
    }
}

/// Reads one step of the round trip back and compares it with what the archive gave: rows in
/// order, settings and attachments by key, documents by path. Nothing is inserted anywhere.
struct RoundTripComparer: ArchiveVisitor {
    /// What a step must bring back. Attachments and documents by their SHA-1.
    struct Expected {
        var rows: [ArchiveRow] = []
        var extensionRows: [JSONNode] = []
        var settings: [String: String] = [:]
        var attachments: [String: [UInt8]] = [:]
        var documents: [String: [UInt8]] = [:]
    }

    let expected: Expected
    /// The step's rows; nil for the last step.
    let section: RoundTripSection?
    /// Per table, `settings`, `attachments`, `documents`: values that did not come back.
    private(set) var differences: [String: Int] = [:]
    private var rowsSeen = 0, settingsSeen = 0, attachmentsSeen = 0, documentsSeen = 0

    init(expected: Expected, section: RoundTripSection?) {
        self.expected = expected
        self.section = section
    }

    mutating func visit(row: ArchiveRow, at index: Int, of table: ArchiveTable) throws {
        rowsSeen += 1
        if section?.name != table.key || index >= expected.rows.count || expected.rows[index] != row { differences[table.key, default: 0] += 1 }
    }

    mutating func visitExtensionRow(_ table: ExtensionTable, row: JSONNode, at index: Int) throws {
        rowsSeen += 1
        if section?.name != table.rawValue || index >= expected.extensionRows.count || expected.extensionRows[index] != row {
            differences[table.rawValue, default: 0] += 1
        }
    }

    /// A value that comes back changed counts once, as does one that does not come back.
    mutating func visitSetting(key: String, value: String) throws {
        if expected.settings[key] != nil { settingsSeen += 1 }
        if expected.settings[key] != value { differences["settings", default: 0] += 1 }
    }

    mutating func visitAttachment(name: String, contents: [UInt8]) throws {
        if expected.attachments[name] != nil { attachmentsSeen += 1 }
        if expected.attachments[name] != SHA1.hash(contents) { differences["attachments", default: 0] += 1 }
    }

    mutating func visitDocument(_ path: DocumentPath, document: JSONNode, originalBytes: [UInt8]?) throws {
        compareDocument(path, originalBytes ?? DocumentCoder.encode(document))
    }

    mutating func visitDocumentFile(_ path: DocumentPath, contents: [UInt8]) throws {
        compareDocument(path, contents)
    }

    private mutating func compareDocument(_ path: DocumentPath, _ bytes: [UInt8]) {
        if expected.documents[path.path] != nil { documentsSeen += 1 }
        if expected.documents[path.path] != SHA1.hash(bytes) { differences["documents", default: 0] += 1 }
    }

    /// Counts what did not come back at all.
    mutating func finish() {
        let rowsExpected = expected.rows.count + expected.extensionRows.count
        if let section {
            if rowsSeen < rowsExpected { differences[section.name, default: 0] += rowsExpected - rowsSeen }
            return
        }
        for (name, count, seen) in [("settings", expected.settings.count, settingsSeen), ("attachments", expected.attachments.count, attachmentsSeen),
                                    ("documents", expected.documents.count, documentsSeen)] where seen < count {
            differences[name, default: 0] += count - seen
        }
    }
}
