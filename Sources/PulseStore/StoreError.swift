import PulseSystem

/// Why a store operation failed. Messages name the store, the table and what went wrong; they
/// never name a command or an option of a front end: where the remedy is one (create a store,
/// choose an import mode, run the backfill again), the kind says so and the front end words it.
/// SQLite's own refusals are `SQLiteError` (PulseSQLite), passed through as they are.
public typealias StoreError = KindedError<StoreErrorKind>

public enum StoreErrorKind: String, Sendable {
    /// The store cannot be read even after an upgrade, or is not a store at all.
    case incompatibleStore
    /// The store's schema is newer than this version knows: a newer version wrote it.
    case newerStore
    /// The store's database holds another program's tables: left as it is (a front end says
    /// where a store goes).
    case foreignDatabase
    /// There is no store where one was expected (a front end says how to create one).
    case missingStore
    /// Another import or export holds the store.
    case busy
    /// The store already holds data and the request needs an empty one, or a mode for what it
    /// holds (an import without replace or merge, a fill of an empty store).
    case storeNotEmpty
    /// The archive was imported and committed, but the readiness backfill after it failed: the
    /// store holds the archive, its readiness history is not recomputed (a front end says how
    /// to run the backfill again).
    case backfillFailed
    /// The request does not fit the store's state: a link or special file where the store's
    /// own files go, no free export name.
    case refused
    /// A file-system operation failed.
    case io
    /// The store must be written before it can be read (an earlier schema, an unfinished
    /// document swap) and cannot be: a read-only directory or snapshot.
    case readOnlyStore
}
