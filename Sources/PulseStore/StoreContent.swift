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
    /// - Parameter limits: the export's, which decide whether a document travels as JSON.
    package init(database: SQLiteDatabase, schema: String, documentTree: DocumentTree?, limits: ArchiveLimits = .standard) {
        self.init(database: database, schema: schema, documents: documentTree.map { StoreDocuments.Content(tree: $0, limits: limits) })
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
        let statement = try database.prepare(#"SELECT "row", "\#(table.uniqueKey)" FROM \#(schema)."\#(table.rawValue)" ORDER BY rowid"#)
        // Parsed as the store holds it; the writer then applies the export's limits, naming
        // the row, so a row imported with a raised limit exports with it.
        let unbounded = ArchiveLimits(maxStringBytes: .max, maxWholeValueBytes: .max)
        var index = 0
        while try statement.step() {
            let place = "\(table.rawValue)[\(index)]"
            let row: JSONNode
            do {
                row = try JSONNode.parse(Array(statement.text(at: 0).utf8), limits: unbounded, what: "the stored row")
            } catch let error as ArchiveError {
                throw ArchiveError.unexportable(place, "the stored row is not valid JSON (\(error.problemInValue)) (was the store edited by another program?)", table: table.rawValue)
            }
            // What the reader would refuse, refused here for every reader of the store (export,
            // `tables --store`), named by the row.
            if let problem = table.problem(with: row) {
                throw ArchiveError.unexportable(place, problem, table: table.rawValue)
            }
            // The store keeps each row under its key, unique by the column's index: a row whose
            // own key is another would go out under that one, and could repeat one. Compared
            // by bytes, as the index and the reader compare keys (Swift's `==` takes `é` and
            // `e` + U+0301 for one string).
            let storedKey = statement.text(at: 1)
            if let key = table.key(of: row), !key.utf8.elementsEqual(storedKey.utf8) {
                throw ArchiveError.unexportable(place, "the row's \(table.uniqueKey) \(ShownText.quoted(key)) is not the key it is kept under, \(ShownText.quoted(storedKey)) (was the store edited by another program?)",
                                                table: table.rawValue)
            }
            try body(row)
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

    /// Settings in key order. Each key and value is read by the rule of every table's text
    /// column (`StoredField.text`): a blob, a number or invalid UTF-8 left by a hand edit is
    /// refused, naming the setting, instead of being converted or repaired.
    package func forEachSetting(_ body: (String, String) throws -> Void) throws {
        let statement = try database.prepare(#"SELECT "key", "value" FROM \#(schema)."settings" ORDER BY "key""#)
        var index = 0
        try statement.forEachRow { row in
            let columns = StoredColumns(row: row)
            let key = try Self.text(columns, 0, place: "settings[\(index)].key", table: "settings")
            try body(key, try Self.text(columns, 1, place: "settings.\(key)", table: "settings"))
            index += 1
        }
    }

    /// Each attachment read in pieces as the writer encodes it: never whole, whatever its size.
    /// Its bytes must be kept as a blob: SQLite reads text only up to its first NUL where a blob
    /// is read whole, so an attachment kept as text is refused rather than written cut.
    package func forEachAttachment(_ body: (String, any PieceReadable) throws -> Void) throws {
        // typeof() and length() name a value's class and size without reading it.
        let statement = try database.prepare(#"SELECT "file", rowid, length("contents"), typeof("contents") FROM \#(schema)."attachments" ORDER BY "file""#)
        var index = 0
        try statement.forEachRow { row in
            let name = try Self.text(StoredColumns(row: row), 0, place: "attachments[\(index)].file", table: "attachments")
            let storedAs = String(decoding: row.text(3), as: UTF8.self)
            guard storedAs == "blob" else {
                let kind = ["null": StoredKind.null, "integer": .integer, "real": .real, "text": .text][storedAs] ?? .null
                throw ArchiveError.unexportable("attachments.\(name)", "the store holds \(kind.described) where the file's bytes (a blob) belong (was the store edited by another program?)",
                                                table: "attachments")
            }
            try body(name, StoreAttachments.StoredBytes(database: database, schema: schema, rowid: row.int64(1), count: Int(row.int64(2))))
            index += 1
        }
    }

    private static func text(_ row: StoredColumns, _ field: Int, place: @autoclosure () -> String, table: String) throws -> String {
        do throws(StoredField.Mismatch) { return try StoredField.text(row, field: field) } catch {
            throw ArchiveError.unexportable(place(), error.problem, table: table)
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
