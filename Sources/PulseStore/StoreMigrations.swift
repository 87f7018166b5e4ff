import PulseArchive
import PulseSQLite
import PulseSystem

/// One named, ordered step of the store's schema history. Each runs once, in its own
/// transaction, and is recorded; a store that has run steps this tool does not know was
/// written by a newer tool and is refused.
///
/// A released step never changes: its SQL is literal, or built from the frozen copy of the
/// table list its release had (`ReleasedTables`), never from the code's tables as they are now
/// (`ArchiveTable.all`, `StoreSchema`). A field added to a table is a new step that adds its
/// column. `StoreMigrationTests` holds every step to the schema it created when released
/// (`Tests/GoldenStores`).
package struct StoreMigration: Sendable {
    package let name: String
    package let sql: [String]

    /// The store's history, oldest first. Append only.
    package static let all: [StoreMigration] = [
        // Schema 1 (released in 8efb2c3).
        StoreMigration(
            name: "createArchiveTables",
            sql: ReleasedTables.schema1.map { $0.createTable() } + [
                """
                CREATE TABLE "settings" (
                  "key" TEXT NOT NULL PRIMARY KEY,
                  "value" TEXT NOT NULL
                )
                """,
                """
                CREATE TABLE "attachments" (
                  "file" TEXT NOT NULL PRIMARY KEY,
                  "contents" BLOB NOT NULL
                )
                """,
            ]
        ),
        // Schema 2 (released in 8efb2c3).
        StoreMigration(
            name: "createReadinessIndexes",
            sql: readinessIndexes
        ),
        // Schema 3 (released in 5dba27f).
        StoreMigration(
            name: "createSleepStageBlocksBySession",
            sql: [sleepStageBlocksBySession]
        ),
        // Schema 4 (released in 89b94cb).
        StoreMigration(
            name: "createDocumentSwaps",
            sql: [#"CREATE TABLE "documentSwaps" ("staging" TEXT NOT NULL PRIMARY KEY)"#]
        ),
        // Schema 5 (released in e451482). The Android port's meals and food products: their
        // fields are the port's, carried whole as a JSON object per row, keyed by the row's
        // unique value.
        StoreMigration(
            name: "createExtensionTables",
            sql: [
                #"CREATE TABLE "mealEntries" ("id" TEXT NOT NULL UNIQUE, "row" TEXT NOT NULL)"#,
                #"CREATE TABLE "foodProducts" ("code" TEXT NOT NULL UNIQUE, "row" TEXT NOT NULL)"#,
            ]
        ),
        // Schema 6 (released in ca8553b). Import builds a new store's indexes after loading its
        // rows, several times faster than keeping them up to date row by row
        // (docs/performance.md); a UNIQUE constraint cannot be dropped for that, a unique index
        // can. Dropping a table drops its indexes: the step creates them again.
        StoreMigration(
            name: "uniqueKeysAsIndexes",
            sql: ReleasedTables.schema1.flatMap { $0.rebuiltWithUniqueIndex() } + readinessIndexes + [sleepStageBlocksBySession]
        ),
        // Schema 7. SQLite writes an integral double of a REAL column as an integer, so a
        // negative zero came back as zero and `verify` could not tell; a column without a
        // declared type keeps each double as bound. The tables with a double are rebuilt, and
        // the indexes their drop took are made again.
        StoreMigration(
            name: "doublesKeepTheirSign",
            sql: ReleasedTables.schema1.flatMap { $0.rebuiltWithoutRealColumns() }
                + (readinessIndexes + [sleepStageBlocksBySession]).filter { index in
                    ReleasedTables.schema1.contains { table in
                        table.columns.contains { $0.definition.hasPrefix("REAL") } && index.contains(#"ON "\#(table.name)" ("#)
                    }
                }
        ),
    ]

    /// The indexes of the readiness queries, as `createReadinessIndexes` made them (and
    /// `uniqueKeysAsIndexes` made them again).
    private static let readinessIndexes = [
        #"CREATE INDEX "measurementsByKindAndTime" ON "measurements" ("kindRaw", "timestamp")"#,
        #"CREATE INDEX "sleepSessionsByDate" ON "sleepSessions" ("date")"#,
        #"CREATE INDEX "activityDailiesByDate" ON "activityDailies" ("date")"#,
        #"CREATE INDEX "activitySessionsByEnd" ON "activitySessions" ("endedAt")"#,
        #"CREATE INDEX "readinessDailiesByDate" ON "readinessDailies" ("date")"#,
    ]

    /// `createSleepStageBlocksBySession`'s index.
    private static let sleepStageBlocksBySession = #"CREATE INDEX "sleepStageBlocksBySession" ON "sleepStageBlocks" ("sessionId")"#

    /// - Throws: `StoreError.newerStore` for a store from a newer version.
    package static func requireKnown(_ version: Int, in database: SQLiteDatabase) throws {
        // A version no step leaves, or one below the steps the store records as run: another
        // program's edit (`PRAGMA user_version`), and the steps it would run again cannot.
        if version < 0 {
            throw StoreError(.incompatibleStore, "\(database.path) says schema version \(version), which no version of this tool writes (was the store edited by another program?)")
        }
        // Version 0 too: a store of ours set back to 0 is no other program's database.
        if try database.integer(#"SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schemaMigrations'"#) == 1 {
            let recorded = try database.integer(#"SELECT count(*) FROM "schemaMigrations""#)
            if recorded > version {
                throw StoreError(.incompatibleStore, "\(database.path) says schema version \(version) but records \(recorded) steps of its schema as run (was the store edited by another program?)")
            }
        }
        if version > all.count {
            throw StoreError(
                .newerStore,
                "\(database.path) was written by a newer version (schema version \(version); this version knows up to \(all.count))"
            )
        }
        // Version 0 is a database no migration has touched: a new, empty one is ours to fill,
        // but one that already holds tables belongs to another program, and migrating it
        // would write our schema into someone else's file, even from a command that only reads.
        if version == 0 {
            let names = try database.prepare(#"SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' AND name <> 'schemaMigrations' ORDER BY name LIMIT 4"#)
            var foreign: [String] = []
            while try names.step() { foreign.append(names.text(at: 0)) }
            if !foreign.isEmpty {
                throw StoreError(
                    .foreignDatabase,
                    "\(database.path) is not a PulseLoop store: it holds tables of another program (\(foreign.prefix(3).joined(separator: ", "))\(foreign.count > 3 ? ", …" : "")) and no store schema version; it was left as it is"
                )
            }
        }
    }

    /// The schema that all the steps leave, created directly from the current code: each table
    /// as its last step left it (the archive tables with unique indexes rather than UNIQUE
    /// constraints) and every index. A new database gets this instead of replaying the history,
    /// whose table rebuilds made SQLite parse the whole schema again after each rename: about
    /// three quarters of the CPU of importing a small archive (a staging area and often a new
    /// store, each a new database). `DeferredIndexTests` checks it against the replayed steps,
    /// object by object, and `StoreMigrationTests` against `Tests/GoldenStores/schema.sql`.
    package static let currentSchema: [String] =
        ArchiveTable.all.map { StoreSchema.createTable($0, unique: false) }
            + [StoreSchema.createSettings, StoreSchema.createAttachments]
            + [#"CREATE TABLE "documentSwaps" ("staging" TEXT NOT NULL PRIMARY KEY)"#]
            + ExtensionTable.allCases.map(StoreSchema.createExtensionTable)
            + ArchiveTable.all.map(StoreSchema.createUniqueIndex)
            + readinessIndexes + [sleepStageBlocksBySession]

    /// Brings `database` up to date (or up to the first `count` steps, as an older tool left
    /// it), each step in its own transaction. A new database (no step run yet) brought fully up
    /// to date gets `currentSchema` in one transaction instead, every step recorded as run.
    /// - Parameter replay: run the steps one by one even on a new database (for the tests that
    ///   compare the two).
    /// - Throws: `StoreError.newerStore` for a store from a newer version.
    package static func migrate(_ database: SQLiteDatabase, through count: Int = all.count, replay: Bool = false) throws {
        let version = Int(try database.integer("PRAGMA user_version"))
        try requireKnown(version, in: database)
        guard version < count else { return }
        if version == 0 {
            try database.execute(#"CREATE TABLE IF NOT EXISTS "schemaMigrations" ("name" TEXT NOT NULL PRIMARY KEY, "appliedAt" INTEGER NOT NULL)"#)
        }
        let record = try database.prepare(#"INSERT INTO "schemaMigrations" ("name", "appliedAt") VALUES (?, strftime('%s','now') * 1000)"#)
        if version == 0 && count == all.count && !replay {
            try database.transaction {
                for statement in currentSchema { try database.execute(statement) }
                for migration in all { try record.run([.string(migration.name)]) }
                try database.execute("PRAGMA user_version = \(all.count)")
            }
            return
        }
        for (index, migration) in all.prefix(count).enumerated().dropFirst(version) {
            try database.transaction {
                for statement in migration.sql {
                    TestPausePoint.reached("migration.statement")
                    try database.execute(statement)
                }
                try record.run([.string(migration.name)])
                try database.execute("PRAGMA user_version = \(index + 1)")
            }
        }
    }
}
