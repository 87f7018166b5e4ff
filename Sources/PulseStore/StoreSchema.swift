import PulseArchive

/// The SQL shape of the store, derived from the archive's table descriptions: one table per
/// archive table, named by its archive key, one column per field named by the field.
///
/// Column types: UUIDs and strings are TEXT (UUIDs upper-case), dates INTEGER milliseconds
/// since 1970 (exact, and ordered for the readiness range queries), booleans INTEGER 0/1,
/// integers INTEGER, doubles REAL.
package enum StoreSchema {
    package static func quoted(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    package static func columnType(_ type: FieldType) -> String {
        switch type {
        case .uuid, .string: return "TEXT"
        case .date, .int, .bool: return "INTEGER"
        case .double: return "REAL"
        }
    }

    /// - Parameters:
    ///   - name: the table's name, when not its key (a table being rebuilt).
    ///   - unique: false leaves out the unique constraint: the store's tables have a unique
    ///     index instead since `uniqueKeysAsIndexes`, and `verify`'s round trip has neither.
    package static func createTable(_ table: ArchiveTable, named name: String? = nil, unique: Bool = true) -> String {
        var columns = table.fields.map { field in
            "\(quoted(field.name)) \(columnType(field.type))\(field.isOptional ? "" : " NOT NULL")"
        }
        if unique { columns.append("UNIQUE (\(quoted(table.uniqueKey)))") }
        return "CREATE TABLE \(quoted(name ?? table.key)) (\n  \(columns.joined(separator: ",\n  "))\n)"
    }

    /// The unique index on a table's key, named `<table>UniqueKey`. An index, unlike a table's
    /// UNIQUE constraint, can be dropped for a bulk load and built after it (`DeferredIndexes`).
    package static func createUniqueIndex(_ table: ArchiveTable) -> String {
        "CREATE UNIQUE INDEX \(quoted(table.key + "UniqueKey")) ON \(quoted(table.key)) (\(quoted(table.uniqueKey)))"
    }

    /// The indexes of the readiness queries (`createReadinessIndexes`).
    package static let readinessIndexes = [
        #"CREATE INDEX "measurementsByKindAndTime" ON "measurements" ("kindRaw", "timestamp")"#,
        #"CREATE INDEX "sleepSessionsByDate" ON "sleepSessions" ("date")"#,
        #"CREATE INDEX "activityDailiesByDate" ON "activityDailies" ("date")"#,
        #"CREATE INDEX "activitySessionsByEnd" ON "activitySessions" ("endedAt")"#,
        #"CREATE INDEX "readinessDailiesByDate" ON "readinessDailies" ("date")"#,
    ]

    /// `createSleepStageBlocksBySession`'s index.
    package static let sleepStageBlocksBySession = #"CREATE INDEX "sleepStageBlocksBySession" ON "sleepStageBlocks" ("sessionId")"#

    /// A table rebuilt without its UNIQUE constraint and given a unique index instead, its
    /// rows and rowids (the export's order) kept. Dropping the old table drops its indexes:
    /// the migration creates them again.
    package static func rebuildWithUniqueIndex(_ table: ArchiveTable) -> [String] {
        let rebuilt = table.key + "Rebuilt"
        let columns = columnList(table)
        return [
            createTable(table, named: rebuilt, unique: false),
            "INSERT INTO \(quoted(rebuilt)) (rowid, \(columns)) SELECT rowid, \(columns) FROM \(quoted(table.key)) ORDER BY rowid",
            "DROP TABLE \(quoted(table.key))",
            "ALTER TABLE \(quoted(rebuilt)) RENAME TO \(quoted(table.key))",
            createUniqueIndex(table),
        ]
    }

    package static let createSettings = """
        CREATE TABLE "settings" (
          "key" TEXT NOT NULL PRIMARY KEY,
          "value" TEXT NOT NULL
        )
        """

    package static let createAttachments = """
        CREATE TABLE "attachments" (
          "file" TEXT NOT NULL PRIMARY KEY,
          "contents" BLOB NOT NULL
        )
        """

    package static func createExtensionTable(_ table: ExtensionTable) -> String {
        #"CREATE TABLE "\#(table.rawValue)" ("\#(table.uniqueKey)" TEXT NOT NULL UNIQUE, "row" TEXT NOT NULL)"#
    }

    /// The tables of `verify`'s temporary store: the store's tables and columns, without the
    /// unique constraints and indexes of the archive tables. An index changes no value, and
    /// `verify` checks unique keys on its own, in sorted runs; settings, attachments and
    /// extension rows keep theirs (they are few, and a repeat among them shows as a violation).
    package static var roundTripTables: [String] {
        ArchiveTable.all.map { createTable($0, unique: false) } + [createSettings, createAttachments]
            + ExtensionTable.allCases.map(createExtensionTable)
    }

    package static func columnList(_ table: ArchiveTable) -> String {
        table.fields.map { quoted($0.name) }.joined(separator: ", ")
    }

    package static func insert(_ table: ArchiveTable, orIgnore: Bool = false) -> String {
        let placeholders = Array(repeating: "?", count: table.fields.count).joined(separator: ", ")
        return "INSERT\(orIgnore ? " OR IGNORE" : "") INTO \(quoted(table.key)) (\(columnList(table))) VALUES (\(placeholders))"
    }

    package static func selectAll(_ table: ArchiveTable, schema: String = "main") -> String {
        "SELECT \(columnList(table)) FROM \(schema).\(quoted(table.key)) ORDER BY rowid"
    }
}

/// One named, ordered step of the store's schema history. Each runs once, in its own
/// transaction, and is recorded; a store that has run steps this tool does not know was
/// written by a newer tool and is refused.
struct StoreMigration {
    let name: String
    let sql: [String]

    /// The store's history, oldest first. Append only: a released step never changes.
    package static let all: [StoreMigration] = [
        StoreMigration(
            name: "createArchiveTables",
            sql: ArchiveTable.all.map { StoreSchema.createTable($0) } + [StoreSchema.createSettings, StoreSchema.createAttachments]
        ),
        StoreMigration(
            name: "createReadinessIndexes",
            sql: StoreSchema.readinessIndexes
        ),
        StoreMigration(
            name: "createSleepStageBlocksBySession",
            sql: [StoreSchema.sleepStageBlocksBySession]
        ),
        StoreMigration(
            name: "createDocumentSwaps",
            sql: [#"CREATE TABLE "documentSwaps" ("staging" TEXT NOT NULL PRIMARY KEY)"#]
        ),
        // The Android port's meals and food products: their fields are the port's, carried
        // whole as a JSON object per row, keyed by the row's unique value.
        StoreMigration(
            name: "createExtensionTables",
            sql: ExtensionTable.allCases.map(StoreSchema.createExtensionTable)
        ),
        // Import builds a new store's indexes after loading its rows, several times faster
        // than keeping them up to date row by row (docs/performance.md); a UNIQUE constraint
        // cannot be dropped for that, a unique index can.
        StoreMigration(
            name: "uniqueKeysAsIndexes",
            sql: ArchiveTable.all.flatMap(StoreSchema.rebuildWithUniqueIndex)
                + StoreSchema.readinessIndexes + [StoreSchema.sleepStageBlocksBySession]
        ),
    ]

    /// - Throws: `StoreError.incompatibleStore` for a store from a newer tool.
    package static func requireKnown(_ version: Int, path: String) throws {
        if version > all.count {
            throw StoreError(
                .incompatibleStore,
                "\(path) was written by a newer pulse-archive (schema version \(version); this tool knows up to \(all.count)): update pulse-archive"
            )
        }
    }

    /// Brings `database` up to date (or up to the first `count` steps, as an older tool left
    /// it), each step in its own transaction.
    /// - Throws: `StoreError.incompatibleStore` for a store from a newer tool.
    package static func migrate(_ database: SQLiteDatabase, through count: Int = all.count) throws {
        let version = Int(try database.integer("PRAGMA user_version"))
        try requireKnown(version, path: database.path)
        guard version < count else { return }
        if version == 0 {
            try database.execute(#"CREATE TABLE IF NOT EXISTS "schemaMigrations" ("name" TEXT NOT NULL PRIMARY KEY, "appliedAt" INTEGER NOT NULL)"#)
        }
        let record = try database.prepare(#"INSERT INTO "schemaMigrations" ("name", "appliedAt") VALUES (?, strftime('%s','now') * 1000)"#)
        for (index, migration) in all.prefix(count).enumerated().dropFirst(version) {
            try database.transaction {
                for statement in migration.sql { try database.execute(statement) }
                try record.run([.string(migration.name)])
                try database.execute("PRAGMA user_version = \(index + 1)")
            }
        }
    }
}
