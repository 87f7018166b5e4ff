#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSQLite
import PulseArchive

/// SQLite's "copy this buffer now" destructor.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
/// A valid address for zero bytes of text.
nonisolated(unsafe) private let emptyText = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
/// Extended result codes that are C macros Swift cannot import.
private let constraintUnique: Int32 = SQLITE_CONSTRAINT | (8 << 8)
private let constraintPrimaryKey: Int32 = SQLITE_CONSTRAINT | (6 << 8)

/// One prepared statement; the only owner of its `sqlite3_stmt*`.
///
/// It keeps no reference to its `SQLiteDatabase`, so a connection can cache its statements
/// without a retain cycle; `sqlite3_close_v2` defers the close until the last one is finalized.
package final class SQLiteStatement {
    private let handle: OpaquePointer
    /// The database file, for messages.
    private let path: String
    package let sql: String

    init(database: SQLiteDatabase, handle db: OpaquePointer?, sql: String) throws(StoreError) {
        self.path = database.path
        self.sql = sql
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK, let statement else {
            throw StoreError(.sqlite, "\(database.path): cannot prepare \(sql): \(database.errorMessage)")
        }
        self.handle = statement
    }

    private var errorMessage: String { String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))) }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Binds `values` to the parameters 1…n after a reset.
    package func bind(_ values: [FieldValue]) throws(StoreError) {
        sqlite3_reset(handle)
        for (i, value) in values.enumerated() {
            try bind(value, at: Int32(i + 1))
        }
    }

    package func bind(_ value: FieldValue, at index: Int32) throws(StoreError) {
        let status: Int32
        switch value {
        case .null: status = sqlite3_bind_null(handle, index)
        case .int(let v), .date(let v): status = sqlite3_bind_int64(handle, index, v)
        case .double(let v): status = sqlite3_bind_double(handle, index, v)
        case .bool(let v): status = sqlite3_bind_int64(handle, index, v ? 1 : 0)
        case .string(var v):
            // An explicit length keeps NUL characters, which JSON strings may hold.
            status = v.withUTF8 { bytes in
                // A NULL pointer would bind SQL NULL: an empty string needs a real address.
                let start = UnsafeRawPointer(bytes.baseAddress ?? UnsafePointer(emptyText)).assumingMemoryBound(to: CChar.self)
                return sqlite3_bind_text(handle, index, start, Int32(bytes.count), transient)
            }
        }
        guard status == SQLITE_OK else { throw StoreError(.sqlite, "\(path): cannot bind a value: \(errorMessage)") }
    }

    package func bindBlob(_ bytes: [UInt8], at index: Int32) throws(StoreError) {
        let status = bytes.withUnsafeBytes { buffer in
            sqlite3_bind_blob(handle, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count), transient)
        }
        guard status == SQLITE_OK else { throw StoreError(.sqlite, "\(path): cannot bind a blob: \(errorMessage)") }
    }

    /// Advances to the next row; false when done.
    package func step() throws(StoreError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let status:
            let unique = status == constraintUnique || status == constraintPrimaryKey
            throw StoreError(unique ? .duplicateKey : .sqlite, "\(path): \(errorMessage)")
        }
    }

    /// Runs a statement that returns no rows.
    package func run(_ values: [FieldValue] = []) throws(StoreError) {
        try bind(values)
        while try step() {}
    }

    package func reset() { sqlite3_reset(handle) }

    package func isNull(at column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    package func int64(at column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    package func double(at column: Int32) -> Double { sqlite3_column_double(handle, column) }

    package func text(at column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    package func blob(at column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// Whether the column, read as `value(at:as:)` reads it, holds `expected`, compared
    /// without building the value (no string is allocated): `verify` asks it of every column
    /// of every row. Text is compared byte for byte, which is what an export writes.
    package func column(_ column: Int32, as type: FieldType, holds expected: FieldValue) -> Bool {
        if isNull(at: column) { return expected.isNull }
        switch (type, expected) {
        case (.int, .int(let v)), (.date, .date(let v)): return int64(at: column) == v
        case (.double, .double(let v)): return double(at: column) == v
        case (.bool, .bool(let v)): return (int64(at: column) != 0) == v
        case (.string, .string(var text)), (.uuid, .string(var text)):
            // Text first, then its length (the order SQLite asks for).
            guard let bytes = sqlite3_column_text(handle, column) else { return text.isEmpty }
            let count = Int(sqlite3_column_bytes(handle, column))
            return text.withUTF8 { $0.count == count && (count == 0 || memcmp($0.baseAddress!, bytes, count) == 0) }
        default: return false
        }
    }

    /// The column as the field type says it was stored.
    package func value(at column: Int32, as type: FieldType) -> FieldValue {
        if isNull(at: column) { return .null }
        switch type {
        case .int: return .int(int64(at: column))
        case .date: return .date(int64(at: column))
        case .double: return .double(double(at: column))
        case .bool: return .bool(int64(at: column) != 0)
        case .string, .uuid: return .string(text(at: column))
        }
    }
}
