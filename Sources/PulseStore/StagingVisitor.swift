import PulseSystem
import PulseArchive
import PulseDocuments
import PulseSQLite

/// Inserts each row the reader delivers into the staging tables, and builds a table's indexes
/// once its rows are in (on the inserting thread, while the reader goes on with the next
/// table), turning a repeated key into the app's duplicate-entries refusal.
struct StagingVisitor: ArchiveVisitor, HandleHolder {
    private let database: SQLiteDatabase
    private let writer: StoreRowWriter
    private let documents: StoreDocuments.Staged
    private var indexes: DeferredIndexes

    init(database: SQLiteDatabase, documents: StoreDocuments.Staged) throws {
        self.database = database
        writer = try StoreRowWriter(database: database)
        self.documents = documents
        indexes = try DeferredIndexes(dropping: database)
    }

    /// The staging connection: it goes with the visitor to the inserting thread.
    var handleOwners: [HandleOwner] { database.handleOwners }

    mutating func endTable(_ table: ArchiveTable, rowCount: Int) throws {
        try indexes.rebuild(of: table.key, repeatedKey: throwFirstRepeat)
    }

    /// Builds the indexes of the tables the archive did not have.
    mutating func endStaging() throws {
        try indexes.rebuild(repeatedKey: throwFirstRepeat)
    }

    /// Throws the app's duplicate-entries refusal for the first row of `tableKey` (in the
    /// file's order) whose key an earlier row has. Staging tables start empty, so a row's
    /// rowid is its index in the file plus one.
    private func throwFirstRepeat(in tableKey: String) throws {
        guard let table = ArchiveTable.named(tableKey) else { return }
        let key = StoreSchema.quoted(table.uniqueKey)
        let query = try database.prepare("""
            SELECT rowid, \(key), first FROM (
              SELECT rowid, \(key), row_number() OVER byKey AS n, first_value(rowid) OVER byKey AS first
              FROM \(StoreSchema.quoted(table.key)) WINDOW byKey AS (PARTITION BY \(key) ORDER BY rowid)
            ) WHERE n = 2 ORDER BY rowid LIMIT 1
            """)
        guard try query.step() else { return }
        let field = table.fields[table.uniqueKeyIndex]
        throw ArchiveError(.duplicateKey, DuplicateKeyMessage.row(table, index: Int(query.int64(at: 0)) - 1,
                                                                  key: query.value(at: 1, as: field.type),
                                                                  firstRow: Int(query.int64(at: 2)) - 1), table: table.key)
    }

    /// Written as the original bytes when the archive has them, else canonically encoded.
    mutating func visitDocument(_ path: DocumentPath, document: JSONNode, originalBytes: [UInt8]?) throws {
        try documents.write(originalBytes ?? DocumentCoder.encode(document), at: path)
    }

    mutating func visitDocumentFile(_ path: DocumentPath, contents: ArchiveBytes) throws {
        try documents.write(contents, at: path)
    }

    /// A repeated key is found when the table's unique index is built (`endTable`).
    mutating func visit(row: ArchiveRow, at index: Int, of table: ArchiveTable) throws {
        try writer.add(row, to: table)
    }

    mutating func visitSetting(key: String, value: String) throws {
        try writer.setSetting(key, value)
    }

    mutating func visitExtensionRow(_ table: ExtensionTable, row: JSONNode, at index: Int) throws {
        do {
            try writer.addExtensionRow(row, to: table)
        } catch let error as SQLiteError where error.kind == .duplicateKey {
            throw ArchiveError(.duplicateKey, DuplicateKeyMessage.extensionRow(table, index: index, key: .string(table.key(of: row) ?? "")), table: table.rawValue)
        }
    }

    mutating func visitAttachment(name: String, contents: ArchiveBytes) throws {
        try writer.addAttachment(name, pieces: contents)
    }
}
