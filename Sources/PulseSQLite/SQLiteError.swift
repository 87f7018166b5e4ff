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
}
