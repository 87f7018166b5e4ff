import PulseArchive
import PulseDocuments
import PulseSQLite

/// Streams a database's tables, and the store's document tree, to the archive writer.
package struct StoreContent: ArchiveContent {
    let database: SQLiteDatabase
    let schema: String
    var documents: StoreDocuments.Content? = nil

    init(database: SQLiteDatabase, schema: String, documents: StoreDocuments.Content? = nil) {
        self.database = database
        self.schema = schema
        self.documents = documents
    }

    /// The tables of `database` in `schema`, and the documents of `documentTree` if given.
    package init(database: SQLiteDatabase, schema: String, documentTree: DocumentTree?) {
        self.init(database: database, schema: schema, documents: documentTree.map { StoreDocuments.Content(tree: $0) })
    }

    package var hasDocuments: Bool { documents != nil }

    package func forEachDocument(stubs: Bool, _ body: (DocumentPath, JSONNode, [UInt8]?) throws -> Void) throws {
        try documents?.forEachDocument(stubs: stubs, body)
    }

    package func forEachDocumentFile(_ body: (DocumentPath, any PieceReadable) throws -> Void) throws {
        try documents?.forEachFile(body)
    }

    package func extensionRowCount(_ table: ExtensionTable) throws -> Int {
        Int(try database.integer("SELECT count(*) FROM \(schema).\(StoreSchema.quoted(table.rawValue))"))
    }

    package func forEachExtensionRow(_ table: ExtensionTable, _ body: (JSONNode) throws -> Void) throws {
        let statement = try database.prepare(#"SELECT "row" FROM \#(schema)."\#(table.rawValue)" ORDER BY rowid"#)
        // Parsed as the store holds it; the writer then applies the export's limits, naming
        // the row, so a row imported with a raised limit exports with it.
        let unbounded = ArchiveLimits(maxStringBytes: .max, maxWholeValueBytes: .max)
        var index = 0
        while try statement.step() {
            try body(try JSONNode.parse(Array(statement.text(at: 0).utf8), limits: unbounded, what: "\(table.rawValue)[\(index)] in the store"))
            index += 1
        }
    }

    package func rowCount(of table: ArchiveTable) throws -> Int {
        Int(try database.integer("SELECT count(*) FROM \(schema).\(StoreSchema.quoted(table.key))"))
    }

    /// The rows as values, read by the export's rule (`StoredRowValues`): a value the store
    /// keeps in a form its field's type cannot read is refused, as export refuses it.
    package func forEachRow(of table: ArchiveTable, _ body: (ArchiveRow) throws -> Void) throws {
        let values = StoredRowValues(table: table)
        var index = 0
        _ = try forEachStoredRow(of: table) { row in
            try body(try values.row(row, index: index))
            index += 1
        }
    }

    package func forEachStoredRow(of table: ArchiveTable, _ body: (any StoredRow) throws -> Void) throws -> Bool {
        let statement = try database.prepare(StoreSchema.selectAll(table, schema: schema))
        try statement.forEachRow { try body(StoredColumns(row: $0)) }
        return true
    }

    package func forEachSetting(_ body: (String, String) throws -> Void) throws {
        let statement = try database.prepare(#"SELECT "key", "value" FROM \#(schema)."settings" ORDER BY "key""#)
        while try statement.step() {
            try body(statement.text(at: 0), statement.text(at: 1))
        }
    }

    /// Each attachment read in pieces as the writer encodes it: never whole, whatever its size.
    package func forEachAttachment(_ body: (String, any PieceReadable) throws -> Void) throws {
        let statement = try database.prepare(#"SELECT "file", rowid, length("contents") FROM \#(schema)."attachments" ORDER BY "file""#)
        while try statement.step() {
            try body(statement.text(at: 0), StoreAttachments.StoredBytes(database: database, schema: schema, rowid: statement.int64(at: 1),
                                                                         count: Int(statement.int64(at: 2))))
        }
    }
}

/// A row of the store as the writer reads it: the columns in the table's field order (as
/// `StoreSchema.selectAll` selects them), dates as milliseconds, booleans as 0 and 1.
private struct StoredColumns: StoredRow {
    let row: SQLiteRow
    func kind(field: Int) -> StoredKind {
        switch row.storageClass(Int32(field)) {
        case .null: .null
        case .integer: .integer
        case .real: .real
        case .text: .text
        case .blob: .blob
        }
    }
    func integer(field: Int) -> Int64 { row.int64(Int32(field)) }
    func real(field: Int) -> Double { row.double(Int32(field)) }
    func text(field: Int) -> UnsafeBufferPointer<UInt8> { row.text(Int32(field)) }
}
