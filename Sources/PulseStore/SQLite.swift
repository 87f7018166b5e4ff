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

/// One open SQLite connection; the only owner of its `sqlite3*`.
package final class SQLiteDatabase {
    package let path: String
    private var handle: OpaquePointer?
    /// Statements prepared once and reused, by SQL text.
    private var statementCache: [String: SQLiteStatement] = [:]

    /// Process-wide settings, made once before the first connection opens.
    private static let configured: Bool = {
        _ = pulse_sqlite3_disable_memory_statistics()
        return true
    }()

    /// How a connection may use its file.
    package enum Access {
        case readWrite
        /// SQLite's read-only open: it still needs `-shm` beside a WAL database, so it creates
        /// one in a writable directory, and reads the WAL through it.
        case readOnly
        /// Read-only without locks or `-shm` (`immutable=1`): the only way SQLite reads a WAL
        /// database in a directory nobody can write, and right only when no WAL holds changes.
        case immutable
    }

    /// Opens (creating if allowed) the database file at `path`. A link at `path` is refused
    /// (`SQLITE_OPEN_NOFOLLOW`): SQLite would otherwise write where it points.
    /// - Parameter attachesReadOnly: lets `attachReadOnly` be used on this connection (it needs
    ///   URI filenames, so `path` must not start with `file:`).
    package init(path: String, create: Bool, access: Access = .readWrite, attachesReadOnly: Bool = false) throws {
        _ = Self.configured
        self.path = path
        var db: OpaquePointer?
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW | (attachesReadOnly ? SQLITE_OPEN_URI : 0)
        var name = Self.resolvingDirectory(path)
        switch access {
        case .readWrite: flags |= SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .immutable:
            flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
            name = Self.uri(name, immutable: true)
        }
        let status = sqlite3_open_v2(name, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "status \(status)"
            sqlite3_close_v2(db)
            throw StoreError(.sqlite, "cannot open the database \(path): \(message)")
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 5_000)
    }

    deinit {
        close()
    }

    /// Closes the connection now (finalizing cached statements); later use fails.
    package func close() {
        statementCache.removeAll()
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Attaches the database at `path` for reading and writing, under a linked directory too
    /// (`resolvingDirectory`).
    package func attach(_ path: String, as schema: String) throws {
        try prepare("ATTACH DATABASE ? AS \(StoreSchema.quoted(schema))").run([.string(Self.resolvingDirectory(path))])
    }

    /// Attaches the database file at `path` as `schema`, read-only: a statement that would
    /// write to it fails. The connection must have been opened with `attachesReadOnly`.
    /// - Parameter immutable: attach as `Access.immutable` (the store was opened so).
    package func attachReadOnly(_ path: String, as schema: String, immutable: Bool = false) throws {
        try prepare("ATTACH DATABASE ? AS \(StoreSchema.quoted(schema))").run([.string(Self.uri(Self.resolvingDirectory(path), immutable: immutable))])
    }

    /// `path` with the links in its directories resolved, its last component as it is.
    /// `SQLITE_OPEN_NOFOLLOW` refuses a link anywhere in the name, but only a link at the
    /// database file itself would make SQLite write elsewhere: a store under a linked directory
    /// (macOS's `/tmp`, a linked home or mount) must open. A directory that cannot be resolved
    /// is left for the open to report. SQLite's own names, `:memory:` and the empty name of a
    /// temporary database, are no files and pass unchanged: resolved, `:memory:` became a file
    /// of that name in the working directory.
    package static func resolvingDirectory(_ path: String) -> String {
        if path == ":memory:" || path.isEmpty { return path }
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let last = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let resolved = realpath(directory, nil) else { return path }
        defer { free(resolved) }
        let real = String(cString: resolved)
        return (real == "/" ? "" : real) + "/" + last
    }

    /// A read-only URI filename for `path`, every byte outside the unreserved set
    /// percent-encoded.
    private static func uri(_ path: String, immutable: Bool) -> String {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/".utf8)
        let hex = Array("0123456789ABCDEF".utf8)
        // An absolute path gets an empty authority, so that `//x` is not read as a host name.
        var uri = Array((path.hasPrefix("/") ? "file://" : "file:").utf8)
        for byte in path.utf8 {
            if unreserved.contains(byte) { uri.append(byte) } else { uri += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]] }
        }
        uri += Array((immutable ? "?mode=ro&immutable=1" : "?mode=ro").utf8)
        return String(decoding: uri, as: UTF8.self)
    }

    /// A statement prepared on first use and kept for the connection's lifetime.
    package func cached(_ sql: String) throws -> SQLiteStatement {
        if let statement = statementCache[sql] { return statement }
        let statement = try prepare(sql)
        statementCache[sql] = statement
        return statement
    }

    package var errorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    /// Runs SQL that returns no rows and takes no values (schema, pragmas, transactions).
    package func execute(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &error)
        if status != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? errorMessage
            sqlite3_free(error)
            throw StoreError(.sqlite, "\(path): \(message)")
        }
    }

    package func prepare(_ sql: String) throws -> SQLiteStatement {
        try SQLiteStatement(database: self, handle: handle, sql: sql)
    }

    /// The single integer a query returns (`PRAGMA user_version`, `count(*)`).
    package func integer(_ sql: String, _ values: FieldValue...) throws -> Int64 {
        let statement = try prepare(sql)
        try statement.bind(values)
        guard try statement.step() else { return 0 }
        return statement.int64(at: 0)
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    package var changes: Int { Int(sqlite3_changes(handle)) }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// - Parameter committing: runs the COMMIT it is given (once), for work bound to the commit
    ///   itself.
    package func transaction<T>(immediate: Bool = true, committing: (_ commit: () throws -> Void) throws -> Void = { try $0() },
                        _ body: () throws -> T) throws -> T {
        try execute(immediate ? "BEGIN IMMEDIATE" : "BEGIN")
        do {
            let result = try body()
            try committing { try execute("COMMIT") }
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}

/// One prepared statement; the only owner of its `sqlite3_stmt*`.
///
/// It keeps no reference to its `SQLiteDatabase`, so a connection can cache its statements
/// without a retain cycle; `sqlite3_close_v2` defers the close until the last one is finalized.
package final class SQLiteStatement {
    private let handle: OpaquePointer
    /// The database file, for messages.
    private let path: String
    package let sql: String

    fileprivate init(database: SQLiteDatabase, handle db: OpaquePointer?, sql: String) throws {
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
    package func bind(_ values: [FieldValue]) throws {
        sqlite3_reset(handle)
        for (i, value) in values.enumerated() {
            try bind(value, at: Int32(i + 1))
        }
    }

    package func bind(_ value: FieldValue, at index: Int32) throws {
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

    package func bindBlob(_ bytes: [UInt8], at index: Int32) throws {
        let status = bytes.withUnsafeBytes { buffer in
            sqlite3_bind_blob(handle, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count), transient)
        }
        guard status == SQLITE_OK else { throw StoreError(.sqlite, "\(path): cannot bind a blob: \(errorMessage)") }
    }

    /// Advances to the next row; false when done.
    package func step() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let status: throw SQLiteStatement.StepError(code: status, message: errorMessage, path: path)
        }
    }

    /// Runs a statement that returns no rows.
    package func run(_ values: [FieldValue] = []) throws {
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

    /// A failed step, with SQLite's extended code so callers can recognise constraints.
    package struct StepError: Error, CustomStringConvertible {
        package let code: Int32
        package let message: String
        package let path: String
        package var isUniqueViolation: Bool { code == constraintUnique || code == constraintPrimaryKey }
        package var description: String { "\(path): \(message)" }
    }
}
