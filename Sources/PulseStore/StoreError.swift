import PulseSystem

/// Why a store operation failed. Messages name the store, the table and what to do.
public typealias StoreError = KindedError<StoreErrorKind>

public enum StoreErrorKind: String, Sendable {
    /// A step after the import's commit failed in SQLite (its message is included); errors of
    /// SQLite itself are `SQLiteError`.
    case sqlite
    /// The store was written by a newer pulse-archive, or is not a store at all.
    case incompatibleStore
    /// There is no store where one was expected.
    case missingStore
    /// Another import or export holds the store.
    case busy
    /// The request does not fit the store's state (a non-empty store without a mode).
    case refused
    /// A file-system operation failed.
    case io
    /// The store must be written before it can be read (an earlier schema, an unfinished
    /// document swap) and cannot be: a read-only directory or snapshot.
    case readOnlyStore
}
