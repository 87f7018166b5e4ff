#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSQLite
import PulseSystem

/// One open SQLite connection; the only owner of its `sqlite3*`.
///
/// Ownership rules (docs/architecture.md, "One owner per C handle"):
/// - The connection is opened `SQLITE_OPEN_NOMUTEX`, so SQLite does not serialise calls: one
///   thread uses it at a time, the thread that opened it or the one it was handed to
///   (`owner`, handed over by `BackgroundWorker`). Every use, by the connection or by one of its
///   statements, checks it and traps otherwise.
/// - A statement holds its connection, and the connection counts its live statements: `close()`
///   uses `sqlite3_close`, which refuses while one is alive, and a close with statements alive
///   is a programming error that traps. Released without `close()`, the database finalizes its
///   cached statements, and the connection closes when the last statement that holds it goes,
///   on the owning thread like every other use (never a zombie left to `sqlite3_close_v2`).
public final class SQLiteDatabase: HandleHolder {
    public var path: String { connection.path }
    /// The thread that may use the connection now.
    public var owner: HandleOwner { connection.owner }
    /// The handle, shared with the statements (which must not keep the database itself: it
    /// caches them).
    let connection: SQLiteConnection
    /// Statements prepared once and reused, by SQL text.
    private var statementCache: [String: SQLiteStatement] = [:]

    public var handleOwners: [HandleOwner] { [owner] }

    /// Process-wide settings, made once before the first connection opens: no memory
    /// statistics, and the default VFS that creates its delete-on-close files without a name
    /// on Linux, else with an interruption held off (`pulse_sqlite3_register_vfs`), so no kill
    /// (no Ctrl-C, where there is no O_TMPFILE) leaves one in the temporary directory. Its
    /// storage lives as long as the process, as SQLite's list of VFSes does.
    private static let configured: Bool = {
        _ = pulse_sqlite3_disable_memory_statistics()
        let storage = calloc(1, pulse_sqlite3_vfs_size())!
        _ = pulse_sqlite3_register_vfs(storage, {
            InterruptCleanup.holdOff()
            TestPausePoint.reached("sqlite.temporary")
        }, {
            TestPausePoint.reached("sqlite.temporary.opened")
            InterruptCleanup.endHoldOff()
        }, { directory in
            directory.map { SystemCalls.isFUSE(String(cString: $0)) ? 1 : 0 } ?? 0
        }, { directory in
            guard let directory else { return -1 }
            let path = String(cString: directory)
            while true {
                if let fd = SystemCalls.openUnnamed(in: path) { return fd }
                if errno != EINTR { return -1 }
            }
        })
        return true
    }()

    /// How a connection may use its file.
    public enum Access: Sendable {
        case readWrite
        /// SQLite's read-only open: it still needs `-shm` beside a WAL database, so it creates
        /// one in a writable directory, and reads the WAL through it.
        case readOnly
        /// Read-only without locks or `-shm` (`immutable=1`): the only way SQLite reads a WAL
        /// database in a directory nobody can write, and right only when no WAL holds changes.
        case immutable
    }

    /// Opens (creating if allowed) the database file at `path`, owned by the calling thread. A
    /// link at `path` is refused (`SQLITE_OPEN_NOFOLLOW`): SQLite would otherwise write where
    /// it points.
    /// - Parameter attachesReadOnly: lets `attachReadOnly` be used on this connection (it needs
    ///   URI filenames, so `path` must not start with `file:`).
    public init(path: String, create: Bool, access: Access = .readWrite, attachesReadOnly: Bool = false) throws(SQLiteError) {
        _ = Self.configured
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
            sqlite3_close(db)
            throw SQLiteError(.of(status: status), "cannot open the database \(path): \(message)")
        }
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 5_000)
        guard pulse_sqlite3_disable_double_quoted_strings(db) == SQLITE_OK else {
            let message = String(cString: sqlite3_errmsg(db))
            let kind = SQLiteErrorKind.of(status: sqlite3_extended_errcode(db))
            sqlite3_close(db)
            throw SQLiteError(kind, "cannot configure the connection to \(path): \(message)")
        }
        guard pulse_sqlite3_define_double_bits(db) == SQLITE_OK else {
            let message = String(cString: sqlite3_errmsg(db))
            let kind = SQLiteErrorKind.of(status: sqlite3_extended_errcode(db))
            sqlite3_close(db)
            throw SQLiteError(kind, "cannot define double_bits on \(path): \(message)")
        }
        connection = SQLiteConnection(handle: db, path: path.isEmpty ? "a temporary database" : path)
    }

    /// A private temporary database that has no name on disk, for decrypted rows no kill may
    /// leave behind. SQLite keeps it in the page cache, and past the cache in a file of its
    /// temporary directory (`$SQLITE_TMPDIR`, else `$TMPDIR`, else /var/tmp, /usr/tmp, /tmp)
    /// that has no name (`configured`'s VFS), as its sorts' and journals' temporary files.
    /// - Throws: when that directory's file system cannot hold a file without a name (FUSE
    ///   without O_TMPFILE): said now, naming it, rather than as a disk I/O error once the
    ///   cache spills.
    public static func unnamed(attachesReadOnly: Bool = false) throws(SQLiteError) -> SQLiteDatabase {
        if let directory = temporaryDirectory, SystemCalls.isFUSE(directory), !SystemCalls.makesUnnamedFiles(in: directory) {
            throw SQLiteError(.unavailable, SystemFile.keepsRemovedFiles(directory, name: "a temporary database").message)
        }
        return try SQLiteDatabase(path: "", create: true, attachesReadOnly: attachesReadOnly)
    }

    /// SQLite's message, with where to look when it ran out of space or could not create a
    /// file while working: not only the database's disk, also its temporary directory's (a
    /// full `$TMPDIR` was reported as the store's disk being full).
    static func explained(_ message: String, status: Int32) -> String {
        let temporary = temporaryDirectory.map { "SQLite's temporary directory \($0) ($SQLITE_TMPDIR, else $TMPDIR)" }
            ?? "SQLite's temporary directory (none is writable: $SQLITE_TMPDIR, $TMPDIR, /var/tmp, /usr/tmp, /tmp)"
        switch status & 0xff {
        case SQLITE_FULL: return "\(message) (the disk of that database, or that of \(temporary))"
        case SQLITE_CANTOPEN: return "\(message) (a journal beside that database, or a temporary file in \(temporary))"
        case SQLITE_IOERR:
            // SQLite's errno is not reliable here, but a file-size limit (`ulimit -f`) is the
            // usual cause of a write failing with no fault of the disk: named when there is one.
            guard let limit = SystemCalls.fileSizeLimit else { return message }
            return "\(message) (this process may write files of at most \(limit) bytes: the file-size limit, ulimit -f, may be what stopped it)"
        default: return message
        }
    }

    /// The directory SQLite keeps its temporary files in (`$SQLITE_TMPDIR`, else `$TMPDIR`,
    /// else /var/tmp, /usr/tmp, /tmp, the current directory), or nil when none is writable.
    public static var temporaryDirectory: String? {
        pulse_sqlite3_temporary_directory().map { String(cString: $0) }
    }

    deinit {
        // Statements prepared outside the cache may still hold the connection: it closes when
        // the last of them goes.
        guard connection.isOpen else { return }
        owner.check()
        statementCache.removeAll()
    }

    /// Closes the connection now, finalizing the cached statements; later use fails. A
    /// statement still alive elsewhere is a programming error: it traps.
    /// Closes the connection now unless a statement prepared outside the cache still holds it
    /// (it then closes with the last of them): for an owner about to remove the database's
    /// files, which needs the descriptor back first when the process has no other to spare.
    public func closeIfUnused() {
        guard connection.isOpen else { return }
        owner.check()
        statementCache.removeAll()
        if connection.liveStatements == 0 { connection.close() }
    }

    public func close() {
        guard connection.isOpen else { return }
        owner.check()
        statementCache.removeAll()
        connection.close()
    }

    /// Attaches the database at `path` for reading and writing, under a linked directory too
    /// (`resolvingDirectory`).
    public func attach(_ path: String, as schema: String) throws(SQLiteError) {
        let statement = try prepare("ATTACH DATABASE ? AS \(Self.quoted(schema))")
        try statement.bind(text: Self.resolvingDirectory(path), at: 1)
        try statement.runToEnd()
    }

    /// Attaches the database file at `path` as `schema`, read-only: a statement that would
    /// write to it fails. The connection must have been opened with `attachesReadOnly`.
    /// - Parameter immutable: attach as `Access.immutable` (the store was opened so).
    public func attachReadOnly(_ path: String, as schema: String, immutable: Bool = false) throws(SQLiteError) {
        let statement = try prepare("ATTACH DATABASE ? AS \(Self.quoted(schema))")
        try statement.bind(text: Self.uri(Self.resolvingDirectory(path), immutable: immutable), at: 1)
        try statement.runToEnd()
    }

    /// The identifier as an SQL quoted name (`"` doubled). Pure Swift: Foundation's
    /// `replacingOccurrences` went through NSString and cost about a tenth of a small import,
    /// as statements are built per table, per batch.
    public static func quoted(_ identifier: String) -> String {
        guard identifier.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + identifier + "\"" }
        return "\"" + identifier.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }

    /// `path` with the links in its directories resolved, its last component as it is.
    /// `SQLITE_OPEN_NOFOLLOW` refuses a link anywhere in the name, but only a link at the
    /// database file itself would make SQLite write elsewhere: a store under a linked directory
    /// (macOS's `/tmp`, a linked home or mount) must open. A directory that cannot be resolved
    /// is left for the open to report. SQLite's own names, `:memory:` and the empty name of a
    /// temporary database, are no files and pass unchanged: resolved, `:memory:` became a file
    /// of that name in the working directory.
    public static func resolvingDirectory(_ path: String) -> String {
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
        let hexDigits = Array("0123456789ABCDEF".utf8)
        // An absolute path gets an empty authority, so that `//x` is not read as a host name.
        var uri = Array((path.hasPrefix("/") ? "file://" : "file:").utf8)
        for byte in path.utf8 {
            if unreserved.contains(byte) {
                uri.append(byte)
            } else {
                uri += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
            }
        }
        uri += Array((immutable ? "?mode=ro&immutable=1" : "?mode=ro").utf8)
        return String(decoding: uri, as: UTF8.self)
    }

    /// A statement prepared on first use and kept until the connection closes.
    public func cached(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let statement = statementCache[sql] { return statement }
        let statement = try prepare(sql)
        statementCache[sql] = statement
        return statement
    }

    /// SQLite's message for the connection's last error.
    public var errorMessage: String { String(cString: sqlite3_errmsg(connection.checked)) }

    /// Runs SQL that returns no rows and takes no values (schema, pragmas, transactions).
    public func execute(_ sql: String) throws(SQLiteError) {
        var error: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(connection.checked, sql, nil, nil, &error)
        if status != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? errorMessage
            sqlite3_free(error)
            throw SQLiteError(.of(status: status), "\(path): \(Self.explained(message, status: status))")
        }
    }

    public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try SQLiteStatement(connection: connection, sql: sql)
    }

    /// The single integer a query without parameters returns (`PRAGMA user_version`,
    /// `count(*)`), 0 when it returns no row.
    public func integer(_ sql: String) throws(SQLiteError) -> Int64 {
        let statement = try prepare(sql)
        guard try statement.step() else { return 0 }
        return statement.int64(at: 0)
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes(connection.checked)) }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// - Parameter committing: runs the COMMIT it is given (once), for work bound to the commit
    ///   itself.
    public func transaction<T>(immediate: Bool = true, committing: (_ commit: () throws -> Void) throws -> Void = { try $0() },
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

/// The `sqlite3*` itself, held by the database and by each of its statements, so that a
/// statement always knows its connection and the connection knows how many statements are
/// alive.
final class SQLiteConnection {
    let path: String
    let owner: HandleOwner
    private var handle: OpaquePointer?
    /// Statements alive, cached or not; counted by `SQLiteStatement` on the owning thread.
    var liveStatements = 0

    init(handle: OpaquePointer, path: String) {
        self.handle = handle
        self.path = path
        owner = HandleOwner("the SQLite connection to \(path)")
    }

    deinit {
        // No statement is alive: each holds the connection.
        if handle != nil { close() }
    }

    var isOpen: Bool { handle != nil }

    /// The open handle, for a use on the calling thread: traps on any other thread, or after
    /// `close()`.
    var checked: OpaquePointer {
        owner.check()
        guard let handle else { preconditionFailure("the SQLite connection to \(path) was used after close()") }
        return handle
    }

    /// `sqlite3_close`, which fails rather than leave a zombie while a statement is alive.
    func close() {
        let handle = checked
        precondition(liveStatements == 0, "the SQLite connection to \(path) closed with \(liveStatements) statements alive")
        let status = sqlite3_close(handle)
        precondition(status == SQLITE_OK, "the SQLite connection to \(path) refused to close: \(String(cString: sqlite3_errmsg(handle)))")
        self.handle = nil
    }
}
