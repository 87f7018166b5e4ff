import PulseArchive
import PulseSQLite
import PulseSystem

/// Inserts rows, settings and attachments into a database with prepared statements, one per
/// table, reused for every row.
public final class StoreRowWriter {
    private var inserts: [String: SQLiteStatement] = [:]
    private let insertSetting: SQLiteStatement
    private let insertAttachment: SQLiteStatement
    private let insertLargeAttachment: SQLiteStatement
    private let database: SQLiteDatabase
    private var insertExtension: [ExtensionTable: SQLiteStatement] = [:]
    /// The statement of the table rows came for last: rows come a table at a time.
    private var current: (key: String, insert: SQLiteStatement)?

    package init(database: SQLiteDatabase) throws {
        self.database = database
        for table in ArchiveTable.all {
            inserts[table.key] = try database.prepare(StoreSchema.insert(table))
        }
        insertSetting = try database.prepare(#"INSERT INTO "settings" ("key", "value") VALUES (?, ?)"#)
        insertAttachment = try database.prepare(#"INSERT INTO "attachments" ("file", "contents") VALUES (?, ?)"#)
        insertLargeAttachment = try database.prepare(#"INSERT INTO "attachments" ("file", "contents") VALUES (?, zeroblob(?))"#)
        for table in ExtensionTable.allCases {
            insertExtension[table] = try database.prepare(#"INSERT INTO "\#(table.rawValue)" ("\#(table.uniqueKey)", "row") VALUES (?, ?)"#)
        }
    }

    /// - Throws: `StoreError.duplicateKey` for a repeated unique value.
    public func addExtensionRow(_ row: JSONNode, to table: ExtensionTable) throws {
        let insert = insertExtension[table]!
        do {
            try insert.run([.string(table.key(of: row) ?? ""), .string(row.compactText)])
        } catch {
            insert.reset()
            throw error
        }
    }

    /// - Throws: `StoreError` (`.duplicateKey` for a repeated unique value).
    public func add(_ row: ArchiveRow, to table: ArchiveTable) throws {
        let insert: SQLiteStatement
        if let current, current.key == table.key {
            insert = current.insert
        } else {
            insert = inserts[table.key]!
            current = (table.key, insert)
        }
        do {
            try insert.run(row.values)
        } catch {
            insert.reset()
            throw error
        }
    }

    public func setSetting(_ key: String, _ value: String) throws {
        try insertSetting.run([.string(key), .string(value)])
    }

    /// An attachment of any size: a large one goes in piece by piece (`StoreAttachments`).
    public func addAttachment(_ name: String, _ contents: [UInt8]) throws {
        try addAttachment(name, pieces: contents)
    }

    public func addAttachment(_ name: String, pieces contents: some PieceReadable) throws {
        if contents.count <= ArchiveBytes.inlineLimit {
            try insertAttachment.bind([.string(name)])
            try insertAttachment.bind(blob: try contents.collected(), at: 2)
            while try insertAttachment.step() {}
            return
        }
        try StoreAttachments.checkSize(contents.count, name, in: database)
        try insertLargeAttachment.run([.string(name), .int(Int64(contents.count))])
        try StoreAttachments.fill(database, rowid: database.lastInsertRowID, with: contents)
    }
}

extension PulseStore {
    /// Fills an empty store (created if missing) in one transaction with what `body` writes.
    /// - Throws: `StoreError.storeNotEmpty` when the store already holds data.
    public static func fillEmptyStore(_ directory: String, _ body: (StoreRowWriter) throws -> Void) throws -> [String: Int] {
        try withExclusiveAccess(directory, create: true, activity: "demo") { store in
            guard try store.isEmpty() else {
                throw StoreError(.storeNotEmpty, "the store \(directory) already holds data")
            }
            // The rows commit with an interruption (or a fatal signal) held off, and one that
            // comes after says the store is no longer empty: the documents and scores that
            // follow the rows are missing then, and a store that holds data is not filled again.
            let outcome = "the store \(directory) holds the demo's rows; its workout documents and readiness scores may be missing: remove it to start again"
            try store.database.transaction(committing: { commit in try InterruptCleanup.keeping([], committing: outcome, during: commit) }) {
                try body(try StoreRowWriter(database: store.database))
            }
            return try store.rowCounts()
        }
    }
}
