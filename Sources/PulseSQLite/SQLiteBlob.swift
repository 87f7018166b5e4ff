import CSQLite

/// One open incremental-I/O handle on a blob (`sqlite3_blob_open`); its only owner.
///
/// For values of any size (attachments): read and written in pieces at offsets, so no value is
/// ever held whole by us or by SQLite. Like a statement it holds its connection, is used on the
/// connection's owning thread only, and keeps the connection from closing while it is alive.
public final class SQLiteBlob {
    private let handle: OpaquePointer
    private let connection: SQLiteConnection
    /// The blob's size in bytes, fixed for the handle's life (SQLite cannot resize it).
    public let count: Int

    init(connection: SQLiteConnection, schema: String, table: String, column: String, rowid: Int64, writable: Bool) throws(SQLiteError) {
        self.connection = connection
        let db = connection.checked
        var blob: OpaquePointer?
        let status = sqlite3_blob_open(db, schema, table, column, rowid, writable ? 1 : 0, &blob)
        guard status == SQLITE_OK, let blob else {
            let message = String(cString: sqlite3_errmsg(db))
            if let blob { sqlite3_blob_close(blob) }
            throw SQLiteError(.of(status: status), "\(connection.path): cannot open \(schema).\(table).\(column) of row \(rowid) for \(writable ? "writing" : "reading"): \(message)")
        }
        handle = blob
        count = Int(sqlite3_blob_bytes(blob))
        connection.liveStatements += 1
    }

    deinit {
        connection.owner.check()
        sqlite3_blob_close(handle)
        connection.liveStatements -= 1
    }

    private var checked: OpaquePointer {
        connection.owner.check()
        return handle
    }

    private func failed(_ status: Int32, _ what: String) throws(SQLiteError) {
        guard status == SQLITE_OK else {
            throw SQLiteError(.of(status: status), "\(connection.path): cannot \(what) a blob: \(String(cString: sqlite3_errstr(status)))")
        }
    }

    /// Fills `buffer` from `offset` (which, with the buffer, must lie within the blob).
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(SQLiteError) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        try failed(sqlite3_blob_read(checked, base, Int32(buffer.count), Int32(offset)), "read")
    }

    /// Writes `bytes` at `offset` (which, with the bytes, must lie within the blob).
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(SQLiteError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        try failed(sqlite3_blob_write(checked, base, Int32(bytes.count), Int32(offset)), "write")
    }
}

extension SQLiteDatabase {
    /// Opens the blob in `column` of the row `rowid` of `schema.table` (`main`, or an attached
    /// database's name).
    public func openBlob(schema: String = "main", table: String, column: String, rowid: Int64, writable: Bool) throws(SQLiteError) -> SQLiteBlob {
        try SQLiteBlob(connection: connection, schema: schema, table: table, column: column, rowid: rowid, writable: writable)
    }

    /// The rowid of the row the last successful INSERT added.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(connection.checked) }

    /// The largest string or blob the connection stores (`SQLITE_LIMIT_LENGTH`: 1,000,000,000
    /// bytes unless SQLite was built otherwise); a larger value is refused.
    public var maxValueBytes: Int { Int(sqlite3_limit(connection.checked, SQLITE_LIMIT_LENGTH, -1)) }
}
