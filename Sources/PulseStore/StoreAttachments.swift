import PulseArchive
import PulseSQLite
import PulseSystem

/// Attachments of any size in and out of the store's `attachments` table, never held whole.
///
/// A small one (at most `ArchiveBytes.inlineLimit`) is bound as a blob as ever; a larger one
/// is inserted as a zero blob of its size and filled in pieces with SQLite's incremental blob
/// I/O, and read back the same way. Either way it is one value of one row, so the store's
/// schema, its transactions (all or nothing) and what an export writes are unchanged. The one
/// bound left is SQLite's own on a value (`SQLiteDatabase.maxValueBytes`, 1 GB by default).
package enum StoreAttachments {
    package static let column = "contents"

    /// Refuses, naming it, an attachment SQLite cannot hold as one value.
    static func checkSize(_ count: Int, _ name: String, in database: SQLiteDatabase) throws {
        let most = database.maxValueBytes
        guard count <= most else {
            throw StoreError(.refused, "attachments: \(name.debugDescription) holds \(count) bytes; the store (SQLite) holds at most \(most) bytes in one value")
        }
    }

    /// Fills the zero blob of row `rowid` of `schema.table` with `contents`, piece by piece.
    static func fill(_ database: SQLiteDatabase, schema: String = "main", table: String = "attachments", rowid: Int64,
                     with contents: some PieceReadable) throws {
        let blob = try database.openBlob(schema: schema, table: table, column: column, rowid: rowid, writable: true)
        var offset = 0
        try contents.forEachPiece { piece in
            TestPausePoint.reached("attachment.piece")
            try blob.write(piece, at: offset)
            offset += piece.count
        }
        guard offset == blob.count else {
            throw StoreError(.io, "an attachment of \(blob.count) bytes was given \(offset) bytes")
        }
    }

    /// Copies the attachments larger than `ArchiveBytes.inlineLimit` from `staging` into
    /// `main` in pieces (the import's commit; the small ones are copied by SQL, which holds a
    /// value whole). `orIgnore`: a name `main` has keeps its contents (a merge).
    static func copyLarge(in database: SQLiteDatabase, from staging: String, orIgnore: Bool) throws -> Int {
        let large = try database.prepare(#"SELECT rowid, "file", length("contents") FROM \#(staging)."attachments" WHERE length("contents") > ? ORDER BY rowid"#)
        try large.bind(int64: Int64(ArchiveBytes.inlineLimit), at: 1)
        let insert = try database.prepare(#"INSERT \#(orIgnore ? "OR IGNORE " : "")INTO main."attachments" ("file", "contents") VALUES (?, zeroblob(?))"#)
        var copied = 0
        while try large.step() {
            let source = StoredBytes(database: database, schema: staging, rowid: large.int64(at: 0), count: Int(large.int64(at: 2)))
            try insert.bind(text: large.text(at: 1), at: 1)
            try insert.bind(int64: Int64(source.count), at: 2)
            try insert.runToEnd()
            insert.reset()
            guard database.changes == 1 else { continue }
            try fill(database, rowid: database.lastInsertRowID, with: source)
            copied += 1
        }
        return copied
    }

    /// An attachment in a database, read in pieces when asked (export, verify).
    package struct StoredBytes: PieceReadable {
        let database: SQLiteDatabase
        let schema: String
        let rowid: Int64
        package let count: Int

        package init(database: SQLiteDatabase, schema: String, rowid: Int64, count: Int) {
            self.database = database
            self.schema = schema
            self.rowid = rowid
            self.count = count
        }

        package func forEachPiece(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
            guard count > 0 else { return }
            let blob = try database.openBlob(schema: schema, table: "attachments", column: column, rowid: rowid, writable: false)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: min(count, ArchiveBytes.pieceSize), alignment: 16)
            defer { buffer.deallocate() }
            var offset = 0
            while offset < blob.count {
                let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(buffer.count, blob.count - offset)])
                try blob.read(into: piece, at: offset)
                try body(UnsafeRawBufferPointer(piece))
                offset += piece.count
            }
        }
    }
}
