import CSQLite
import PulseSystem

/// Why SQLite refused: a `kind` to branch on and SQLite's own message, prefixed with the
/// database file.
public typealias SQLiteError = KindedError<SQLiteErrorKind>

public enum SQLiteErrorKind: String, Sendable {
    /// SQLite reported an error (its message is included).
    case sqlite
    /// SQLite refused a row whose unique key (a UNIQUE constraint, a unique index or a primary
    /// key) another row of its table already has.
    case duplicateKey
    /// SQLite could not get what it needs from the system: memory, disk space, a file it must
    /// open or create, the permission to write, a lock. The data is not at fault: `verify`
    /// says it could not finish rather than report the archive damaged.
    case unavailable

    /// The kind of a failure with SQLite's result `status` (extended codes too), for anything
    /// but a unique key.
    package static func of(status: Int32) -> SQLiteErrorKind {
        switch status & 0xFF {
        case SQLITE_NOMEM, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_NOLFS, SQLITE_PERM, SQLITE_READONLY,
             SQLITE_BUSY, SQLITE_LOCKED:
            .unavailable
        default:
            .sqlite
        }
    }
}

extension SQLiteErrorKind: MachineFailureKind {
    /// SQLite without what it needs from the system (`unavailable`).
    public var isMachineFailure: Bool { self == .unavailable }
}
