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
