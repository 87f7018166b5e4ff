import Foundation
import PulseArchive
import PulseDocuments

/// Reads an archive exported from `store` back and compares it with the store as it streams:
/// rows table by table in the store's order, settings and attachments by key, extension rows,
/// and documents with the store's tree. Nothing is inserted anywhere.
struct RoundTripComparer: ArchiveVisitor {
    let database: SQLiteDatabase
    let tree: DocumentTree
    /// Per table, `settings`, `attachments`, `documents`: values that did not come back.
    private(set) var differences: [String: Int] = [:]
    private var cursor: SQLiteStatement?
    private var settings: SQLiteStatement?
    private var attachments: SQLiteStatement?
    private var extensions: [ExtensionTable: SQLiteStatement] = [:]
    private var documentsSeen = 0

    /// - Parameter database: a connection to the store's database of the caller's own.
    init(store: PulseStore, database: SQLiteDatabase) throws {
        self.database = database
        tree = try DocumentTree(scanning: store.directory)
    }

    mutating func beginTable(_ table: ArchiveTable) throws {
        cursor = try database.prepare(StoreSchema.selectAll(table))
    }

    mutating func visit(row: ArchiveRow, at index: Int, of table: ArchiveTable) throws {
        guard let cursor, try cursor.step() else { differences[table.key, default: 0] += 1; return }
        for (i, field) in table.fields.enumerated() where cursor.value(at: Int32(i), as: field.type) != row[i] {
            differences[table.key, default: 0] += 1
            return
        }
    }

    mutating func endTable(_ table: ArchiveTable, rowCount: Int) throws {
        while let cursor, try cursor.step() { differences[table.key, default: 0] += 1 }
        cursor = nil
    }

    mutating func visitSetting(key: String, value: String) throws {
        if settings == nil { settings = try database.prepare(#"SELECT "key", "value" FROM "settings" ORDER BY "key""#) }
        guard let settings, try settings.step(), settings.text(at: 0) == key, settings.text(at: 1) == value else {
            differences["settings", default: 0] += 1
            return
        }
    }

    mutating func visitAttachment(name: String, contents: [UInt8]) throws {
        if attachments == nil { attachments = try database.prepare(#"SELECT "file", "contents" FROM "attachments" ORDER BY "file""#) }
        guard let attachments, try attachments.step(), attachments.text(at: 0) == name, attachments.blob(at: 1) == contents else {
            differences["attachments", default: 0] += 1
            return
        }
    }

    mutating func visitExtensionRow(_ table: ExtensionTable, row: JSONNode, at index: Int) throws {
        if extensions[table] == nil {
            extensions[table] = try database.prepare(#"SELECT "row" FROM "\#(table.rawValue)" ORDER BY rowid"#)
        }
        guard let cursor = extensions[table], try cursor.step(), (try? JSONNode.parse(Array(cursor.text(at: 0).utf8))) == row else {
            differences[table.rawValue, default: 0] += 1
            return
        }
    }

    mutating func visitDocument(_ path: DocumentPath, document: JSONNode, originalBytes: [UInt8]?) throws {
        try compareDocument(path, originalBytes ?? DocumentCoder.encode(document))
    }

    mutating func visitDocumentFile(_ path: DocumentPath, contents: [UInt8]) throws {
        try compareDocument(path, contents)
    }

    private mutating func compareDocument(_ path: DocumentPath, _ bytes: [UInt8]) throws {
        documentsSeen += 1
        if (try? tree.read(path)) != bytes { differences["documents", default: 0] += 1 }
    }

    /// What the stream did not bring back at all: rows of tables it lacked, trailing
    /// settings, attachments, extension rows and documents.
    mutating func finish(summary: ArchiveSummary) throws {
        for table in ArchiveTable.all where summary.rowsFound[table.key] == nil {
            let missing = Int(try database.integer("SELECT count(*) FROM \(StoreSchema.quoted(table.key))"))
            if missing > 0 { differences[table.key, default: 0] += missing }
        }
        for (name, cursor) in [("settings", settings), ("attachments", attachments)] {
            if let cursor { while try cursor.step() { differences[name, default: 0] += 1 } }
        }
        if settings == nil, try database.integer(#"SELECT count(*) FROM "settings""#) > 0 { differences["settings", default: 0] += 1 }
        if attachments == nil, try database.integer(#"SELECT count(*) FROM "attachments""#) > 0 { differences["attachments", default: 0] += 1 }
        for table in ExtensionTable.allCases {
            let stored = Int(try database.integer("SELECT count(*) FROM \(StoreSchema.quoted(table.rawValue))"))
            if stored != summary.rowsFound[table.rawValue] ?? 0 { differences[table.rawValue, default: 0] += 1 }
        }
        if documentsSeen != tree.documents.count { differences["documents", default: 0] += abs(tree.documents.count - documentsSeen) }
    }
}
