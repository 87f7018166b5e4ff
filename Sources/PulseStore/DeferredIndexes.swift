import PulseSQLite

/// A database's named indexes, dropped for a bulk load and built again after it.
///
/// Keeping a unique index on random UUIDs up to date row by row seeks and splits pages all over
/// it; building it after the load sorts the keys once and writes its pages in order, about three
/// times faster (docs/performance.md). Each index is created again from the SQL the schema
/// holds for it, so the database ends with exactly the schema it had. Use inside the load's
/// transaction: a failure rolls the drops back with the rows.
struct DeferredIndexes {
    /// Memory for sorting an index's keys before SQLite merges them from temporary files.
    static let sortMemoryKiB = 4_000

    private let database: SQLiteDatabase
    /// Table and SQL of each dropped index not yet built again, in the schema's order.
    private var pending: [(table: String, sql: String)]

    /// Drops every named index (the indexes SQLite makes for a table's own constraints stay).
    init(dropping database: SQLiteDatabase) throws {
        self.database = database
        let query = try database.prepare("SELECT name, tbl_name, sql FROM main.sqlite_schema WHERE type = 'index' AND sql IS NOT NULL ORDER BY rowid")
        var names: [String] = []
        var pending: [(table: String, sql: String)] = []
        while try query.step() {
            names.append(query.text(at: 0))
            pending.append((query.text(at: 1), query.text(at: 2)))
        }
        for name in names { try database.execute("DROP INDEX main.\(StoreSchema.quoted(name))") }
        self.pending = pending
    }

    /// Builds the indexes of `table` again (nil: every index still dropped).
    /// - Parameter repeatedKey: called with the table when one of its unique indexes finds a
    ///   key twice; it throws the error to report (else SQLite's is thrown).
    mutating func rebuild(of table: String? = nil, repeatedKey: (_ table: String) throws -> Void) throws {
        while let next = pending.firstIndex(where: { table == nil || $0.table == table }) {
            let index = pending.remove(at: next)
            do {
                try build(index.sql)
            } catch let error as SQLiteError where error.kind == .duplicateKey {
                try repeatedKey(index.table)
                throw error
            }
        }
    }

    /// Runs an index's SQL with the cache made smaller for the sort, and set back after.
    private func build(_ sql: String) throws {
        // SQLite sorts an index's keys in memory up to the page cache's size: a smaller cache
        // while building keeps peak memory the same for a year or ten of rows.
        try database.execute("PRAGMA cache_size = -\(Self.sortMemoryKiB)")
        defer { try? database.execute("PRAGMA cache_size = -\(PulseStore.pageCacheKiB)") }
        try database.prepare(sql).run()
    }
}
