import PulseArchive
import PulseSQLite

/// The SQL the store's code runs, derived from the archive's table descriptions as they are
/// now: one table per archive table, named by its archive key, one column per field named by
/// the field. The migrations that made the store's tables do not use it: a released step
/// never changes (`StoreMigration`, `ReleasedTables`), so a field added here needs a new step.
///
/// Column types: UUIDs and strings are TEXT (UUIDs upper-case), dates INTEGER milliseconds
/// since 1970 (exact, and ordered for the readiness range queries), booleans INTEGER 0/1,
/// integers INTEGER, doubles with no declared type. A REAL column would lose negative zero:
/// SQLite writes an integral double of a REAL column as an integer and reads back `0.0`;
/// a column without a type keeps every double as it was bound, eight bytes, sign and all.
package enum StoreSchema {
    /// The identifier as an SQL quoted name (`SQLiteDatabase.quoted`).
    package static func quoted(_ identifier: String) -> String { SQLiteDatabase.quoted(identifier) }

    /// The unique index on a table's key, named `<table>UniqueKey`, as the current schema has
    /// it. An index, unlike a table's UNIQUE constraint, can be dropped for a bulk load and
    /// built after it (`DeferredIndexes`).
    package static func createUniqueIndex(_ table: ArchiveTable) -> String {
        "CREATE UNIQUE INDEX \(quoted(table.key + "UniqueKey")) ON \(quoted(table.key)) (\(quoted(table.uniqueKey)))"
    }

    package static func columnType(_ type: FieldType) -> String {
        switch type {
        case .uuid, .string: return "TEXT"
        case .date, .int, .bool: return "INTEGER"
        case .double: return ""
        }
    }

    /// - Parameter unique: false leaves out the unique constraint (the store's tables have a
    ///   unique index instead since `uniqueKeysAsIndexes`, and `verify`'s round trip has neither).
    package static func createTable(_ table: ArchiveTable, unique: Bool = true) -> String {
        var columns = table.fields.map { field in
            let type = columnType(field.type)
            return "\(quoted(field.name))\(type.isEmpty ? "" : " " + type)\(field.isOptional ? "" : " NOT NULL")"
        }
        if unique { columns.append("UNIQUE (\(quoted(table.uniqueKey)))") }
        return "CREATE TABLE \(quoted(table.key)) (\n  \(columns.joined(separator: ",\n  "))\n)"
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

    /// Why the rows of a store's database cannot be read as an export reads them, or nil: a
    /// table or column missing (a hand edit dropped it), or a key without the unique index or
    /// constraint that keeps it from repeating (an archive with a repeated key is one no reader
    /// takes). Asked of a store of the current schema before anything reads it.
    package static func readabilityProblem(in database: SQLiteDatabase, schema: String = "main") throws -> String? {
        let tables = ArchiveTable.all.map { ($0.key, $0.fields.map(\.name), $0.uniqueKey) }
            + [("settings", ["key", "value"], "key"), ("attachments", ["file", "contents"], "file")]
            + ExtensionTable.allCases.map { ($0.rawValue, [$0.uniqueKey, "row"], $0.uniqueKey) }
        // SQLite names columns in any letter case (`"NAME"` reads `name`).
        let columns = try database.prepare("SELECT lower(name) FROM pragma_table_info(?1, ?2)")
        let uniqueKey = try database.prepare("""
            SELECT EXISTS (SELECT 1 FROM pragma_index_list(?1, ?2) AS list WHERE list."unique" = 1 AND list.partial = 0
              AND (SELECT lower(group_concat(name, char(0))) FROM pragma_index_info(list.name, ?2)) = lower(?3))
            """)
        // What the store's code reads besides the tables: the record of an import's pending
        // document swap. And no trigger: the store has none, and one a hand edit left would run
        // inside an import (a merge that deletes other rows as it inserts).
        if try database.integer("SELECT count(*) FROM \(schema).sqlite_master WHERE type = 'table' AND name = 'documentSwaps'") == 0 {
            return "it has no table \"documentSwaps\""
        }
        let triggers = try database.prepare("SELECT name FROM \(schema).sqlite_master WHERE type = 'trigger' ORDER BY name LIMIT 1")
        if try triggers.step() {
            return "it has a trigger, \(ShownText.quoted(triggers.text(at: 0))), which no version of this tool makes and which would run inside an import"
        }
        for (table, fields, key) in tables {
            columns.reset()
            try columns.bind(text: table, at: 1)
            try columns.bind(text: schema, at: 2)
            var present: Set<String> = []
            while try columns.step() { present.insert(columns.text(at: 0)) }
            guard !present.isEmpty else { return "it has no table \"\(table)\"" }
            if let missing = fields.first(where: { !present.contains($0.lowercased()) }) {
                return "its table \"\(table)\" has no column \"\(missing)\""
            }
            uniqueKey.reset()
            try uniqueKey.bind(text: table, at: 1)
            try uniqueKey.bind(text: schema, at: 2)
            try uniqueKey.bind(text: key, at: 3)
            guard try uniqueKey.step(), uniqueKey.int64(at: 0) == 1 else {
                return "its table \"\(table)\" has no unique index on \"\(key)\", so a key may repeat there, which no archive may hold"
            }
        }
        return nil
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
