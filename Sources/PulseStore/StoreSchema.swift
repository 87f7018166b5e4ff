import Foundation
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

    /// Why the rows of a store's database cannot be read and written as this tool reads and
    /// writes them, or nil. Asked of a store of the current schema whenever it is opened. A hand
    /// edit can leave: a table or column missing (SQLite read a missing `"name"` as the string
    /// 'name'); a column of another declared type (its affinity converts what an import writes:
    /// the text "0010" kept as 10, -0.0 as 0); a key without the unique index or constraint that
    /// keeps it from repeating, by its bytes (under NOCASE a merge would drop a meal whose id
    /// differs from another's in letter case only); a CHECK constraint (an import's `INSERT OR
    /// IGNORE` skips the rows it fails, without a word); a view or a table without rowid where
    /// a table belongs; a trigger (it would run inside an import); a pending document swap
    /// under a name this tool never gives one (finishing it renames and removes folders by it).
    /// Read from `sqlite_master` and the table-valued pragmas SQLite has had since 3.16, so an
    /// older system SQLite (an Apple platform's) reads it too.
    package static func readabilityProblem(in database: SQLiteDatabase, schema: String = "main") throws -> String? {
        typealias Expected = (table: String, columns: [(name: String, type: String)], key: String)
        let tables: [Expected] = ArchiveTable.all.map { table in (table.key, table.fields.map { ($0.name, columnType($0.type)) }, table.uniqueKey) }
            + [("settings", [("key", "TEXT"), ("value", "TEXT")], "key"), ("attachments", [("file", "TEXT"), ("contents", "BLOB")], "file")]
            + ExtensionTable.allCases.map { ($0.rawValue, [($0.uniqueKey, "TEXT"), ("row", "TEXT")], $0.uniqueKey) }
            + [("documentSwaps", [("staging", "TEXT")], "staging")]
        // SQLite finds a table by its name in any letter case.
        let kind = try database.prepare("SELECT type, coalesce(sql, '') FROM \(schema).sqlite_master WHERE lower(name) = lower(?1) AND type IN ('table', 'view')")
        // SQLite names columns and types in any letter case (`"NAME"` reads `name`).
        let columns = try database.prepare("SELECT lower(name), upper(type) FROM pragma_table_info(?1, ?2)")
        let uniqueKey = try database.prepare("""
            SELECT EXISTS (SELECT 1 FROM pragma_index_list(?1, ?2) AS list WHERE list."unique" = 1 AND list.partial = 0
              AND (SELECT lower(group_concat(name, char(0))) FROM pragma_index_info(list.name, ?2)) = lower(?3)
              AND (SELECT upper(group_concat(coll)) FROM pragma_index_xinfo(list.name, ?2) WHERE key = 1) = 'BINARY')
            """)
        let triggers = try database.prepare("SELECT name FROM \(schema).sqlite_master WHERE type = 'trigger' ORDER BY name LIMIT 1")
        if try triggers.step() {
            return "it has a trigger, \(ShownText.quoted(triggers.text(at: 0))), which no version of this tool makes and which would run inside an import"
        }
        for (table, expected, key) in tables {
            kind.reset()
            try kind.bind(text: table, at: 1)
            for statement in [columns, uniqueKey] {
                statement.reset()
                try statement.bind(text: table, at: 1)
                try statement.bind(text: schema, at: 2)
            }
            guard try kind.step() else { return "it has no table \"\(table)\"" }
            guard kind.text(at: 0) == "table" else { return "its \"\(table)\" is a \(kind.text(at: 0)), not a table" }
            let sql = kind.text(at: 1)
            if sql.range(of: #"\bWITHOUT\s+ROWID\b"#, options: [.regularExpression, .caseInsensitive]) != nil {
                return "its table \"\(table)\" is a table without rowid, which this tool does not read"
            }
            if sql.range(of: #"\bCHECK\s*\("#, options: [.regularExpression, .caseInsensitive]) != nil {
                return "its table \"\(table)\" has a CHECK constraint, which no version of this tool makes and which would make an import skip rows without a word"
            }
            var present: [String: String] = [:]
            while try columns.step() { present[columns.text(at: 0)] = columns.text(at: 1) }
            for (name, type) in expected {
                guard let declared = present[name.lowercased()] else { return "its table \"\(table)\" has no column \"\(name)\"" }
                guard declared == type else {
                    return "its table \"\(table)\" declares the column \"\(name)\" \(declared.isEmpty ? "without a type" : declared), where this tool makes it \(type.isEmpty ? "without a type" : type)"
                }
            }
            try uniqueKey.bind(text: key, at: 3)
            guard try uniqueKey.step(), uniqueKey.int64(at: 0) == 1 else {
                return "its table \"\(table)\" has no unique index on \"\(key)\" comparing its bytes, so a key may repeat there, which no archive may hold, or two keys count as one"
            }
        }
        let swaps = try database.prepare(#"SELECT "staging", typeof("staging") FROM \#(schema)."documentSwaps""#)
        while try swaps.step() {
            let staging = swaps.text(at: 0)
            guard swaps.text(at: 1) == "text", isStagingName(staging) else {
                return "it records an unfinished document swap from \(ShownText.quoted(staging)), a name this tool never gives one, and finishing it would move and remove folders by it"
            }
        }
        return nil
    }

    /// The name an import gives its staging directory inside the store: `.staging-<pid>`.
    package static func isStagingName(_ name: String) -> Bool {
        let prefix = ".staging-"
        guard name.hasPrefix(prefix) else { return false }
        let digits = name.utf8.dropFirst(prefix.utf8.count)
        return !digits.isEmpty && digits.count <= 20 && digits.allSatisfy { (0x30...0x39).contains($0) }
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
