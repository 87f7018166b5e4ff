#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSQLite
import PulseArchive

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
    package init(path: String, create: Bool, access: Access = .readWrite, attachesReadOnly: Bool = false) throws(StoreError) {
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
    package func attach(_ path: String, as schema: String) throws(StoreError) {
        try prepare("ATTACH DATABASE ? AS \(StoreSchema.quoted(schema))").run([.string(Self.resolvingDirectory(path))])
    }

    /// Attaches the database file at `path` as `schema`, read-only: a statement that would
    /// write to it fails. The connection must have been opened with `attachesReadOnly`.
    /// - Parameter immutable: attach as `Access.immutable` (the store was opened so).
    package func attachReadOnly(_ path: String, as schema: String, immutable: Bool = false) throws(StoreError) {
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
        // An absolute path gets an empty authority, so that `//x` is not read as a host name.
        var uri = Array((path.hasPrefix("/") ? "file://" : "file:").utf8)
        for byte in path.utf8 {
            if unreserved.contains(byte) {
                uri.append(byte)
            } else {
                uri.append(UInt8(ascii: "%"))
                HexText.append(byte, to: &uri)
            }
        }
        uri += Array((immutable ? "?mode=ro&immutable=1" : "?mode=ro").utf8)
        return String(decoding: uri, as: UTF8.self)
    }

    /// A statement prepared on first use and kept for the connection's lifetime.
    package func cached(_ sql: String) throws(StoreError) -> SQLiteStatement {
        if let statement = statementCache[sql] { return statement }
        let statement = try prepare(sql)
        statementCache[sql] = statement
        return statement
    }

    package var errorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    /// Runs SQL that returns no rows and takes no values (schema, pragmas, transactions).
    package func execute(_ sql: String) throws(StoreError) {
        var error: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &error)
        if status != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? errorMessage
            sqlite3_free(error)
            throw StoreError(.sqlite, "\(path): \(message)")
        }
    }

    package func prepare(_ sql: String) throws(StoreError) -> SQLiteStatement {
        try SQLiteStatement(database: self, handle: handle, sql: sql)
    }

    /// The single integer a query returns (`PRAGMA user_version`, `count(*)`).
    package func integer(_ sql: String, _ values: FieldValue...) throws(StoreError) -> Int64 {
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

