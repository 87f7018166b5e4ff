#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSQLite

/// SQLite's "copy this buffer now" destructor.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
/// A valid address for zero bytes of text.
nonisolated(unsafe) private let emptyText = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
/// Extended result codes that are C macros Swift cannot import.
private let constraintUnique: Int32 = SQLITE_CONSTRAINT | (8 << 8)
private let constraintPrimaryKey: Int32 = SQLITE_CONSTRAINT | (6 << 8)

/// One prepared statement; the only owner of its `sqlite3_stmt*`.
///
/// It holds its connection (not the `SQLiteDatabase`, which caches statements), is used on the
/// connection's owning thread only, and is finalized there: every call checks, and the
/// connection refuses to close while a statement is alive.
public final class SQLiteStatement {
    private let handle: OpaquePointer
    private let connection: SQLiteConnection
    public let sql: String

    init(connection: SQLiteConnection, sql: String) throws(SQLiteError) {
        self.connection = connection
        self.sql = sql
        let db = connection.checked
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else {
            throw SQLiteError(.of(status: status), "\(connection.path): cannot prepare \(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
        self.handle = statement
        connection.liveStatements += 1
    }

    deinit {
        connection.owner.check()
        sqlite3_finalize(handle)
        connection.liveStatements -= 1
    }

    /// The statement, for a use on the calling thread (which must own the connection).
    private var checked: OpaquePointer {
        connection.owner.check()
        return handle
    }

    private var errorMessage: String { String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))) }

    private func bound(_ status: Int32, _ what: String) throws(SQLiteError) {
        guard status == SQLITE_OK else { throw SQLiteError(.of(status: status), "\(connection.path): cannot bind \(what): \(errorMessage)") }
    }

    /// Resets the statement and clears nothing: the next binds replace the values.
    public func reset() { sqlite3_reset(checked) }

    public func bindNull(at index: Int32) throws(SQLiteError) {
        try bound(sqlite3_bind_null(checked, index), "a NULL")
    }

    public func bind(int64 value: Int64, at index: Int32) throws(SQLiteError) {
        try bound(sqlite3_bind_int64(checked, index, value), "an integer")
    }

    public func bind(double value: Double, at index: Int32) throws(SQLiteError) {
        try bound(sqlite3_bind_double(checked, index, value), "a real")
    }

    /// Binds the text with its explicit length, so NUL characters (which JSON strings may hold)
    /// are kept.
    public func bind(text: String, at index: Int32) throws(SQLiteError) {
        var text = text
        let statement = checked
        let status = text.withUTF8 { bytes in
            // A NULL pointer would bind SQL NULL: an empty string needs a real address.
            let start = UnsafeRawPointer(bytes.baseAddress ?? UnsafePointer(emptyText)).assumingMemoryBound(to: CChar.self)
            return sqlite3_bind_text(statement, index, start, Int32(bytes.count), transient)
        }
        try bound(status, "a text")
    }

    public func bind(blob bytes: [UInt8], at index: Int32) throws(SQLiteError) {
        let statement = checked
        let status = bytes.withUnsafeBytes { buffer in
            sqlite3_bind_blob(statement, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count), transient)
        }
        try bound(status, "a blob")
    }

    /// Advances to the next row; false when done.
    /// - Throws: `.duplicateKey` when a unique key refuses the row.
    public func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(checked) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let status:
            let unique = status == constraintUnique || status == constraintPrimaryKey
            throw SQLiteError(unique ? .duplicateKey : .of(status: status), "\(connection.path): \(SQLiteDatabase.explained(errorMessage, status: status))")
        }
    }

    /// Steps through the rows, handing `body` each one's columns in place. The owner is checked
    /// once per row (by `step`), not once per column: an export reads every column of a million
    /// rows, and the per-call check with its reference counting was a fifth of that.
    public func forEachRow(_ body: (SQLiteRow) throws -> Void) throws {
        while try step() {
            try body(SQLiteRow(handle: handle))
        }
    }

    /// Steps until the statement is done (a statement that returns no rows).
    public func runToEnd() throws(SQLiteError) {
        while try step() {}
    }

    public func isNull(at column: Int32) -> Bool { sqlite3_column_type(checked, column) == SQLITE_NULL }
    public func int64(at column: Int32) -> Int64 { sqlite3_column_int64(checked, column) }
    public func double(at column: Int32) -> Double { sqlite3_column_double(checked, column) }

    public func text(at column: Int32) -> String {
        let statement = checked
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    public func blob(at column: Int32) -> [UInt8] {
        let statement = checked
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// Whether the text column holds exactly `expected`'s bytes, compared without building a
    /// string (`verify` asks it of every text column of every row).
    public func text(at column: Int32, equals expected: String) -> Bool {
        var expected = expected
        let statement = checked
        // Text first, then its length (the order SQLite asks for).
        guard let bytes = sqlite3_column_text(statement, column) else { return expected.isEmpty }
        let count = Int(sqlite3_column_bytes(statement, column))
        return expected.withUTF8 { $0.count == count && (count == 0 || memcmp($0.baseAddress!, bytes, count) == 0) }
    }
}

/// The current row of a statement, its columns read where SQLite keeps them. Valid only inside
/// the `forEachRow` call that handed it over, on that thread: a text's bytes last until the
/// statement steps on.
public struct SQLiteRow {
    fileprivate let handle: OpaquePointer

    /// SQLite's storage classes: what a column of this row holds, whatever its declared type.
    public enum StorageClass: Sendable { case null, integer, real, text, blob }

    public func storageClass(_ column: Int32) -> StorageClass {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }
    public func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    public func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    /// The text's UTF-8 bytes as stored (not checked: a hand-edited store may hold invalid
    /// UTF-8), valid until the statement steps on.
    public func text(_ column: Int32) -> UnsafeBufferPointer<UInt8> {
        // Text first, then its length (the order SQLite asks for).
        guard let bytes = sqlite3_column_text(handle, column) else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, column)))
    }
}
