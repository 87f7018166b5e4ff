import Foundation
import PulseArchive
import PulseDocuments

/// A store: one directory holding `pulse.sqlite` (every archive table, the settings and the
/// attachments), created private to its owner.
public final class PulseStore {
    public static let databaseFileName = "pulse.sqlite"
    public static let backupsDirectoryName = "backups"

    public let directory: String
    /// Replaced only when an import into an empty store promotes its staged database.
    private(set) var database: SQLiteDatabase

    public var databasePath: String { directory + "/" + Self.databaseFileName }

    private init(directory: String, database: SQLiteDatabase) {
        self.directory = directory
        self.database = database
    }

    /// Opens the store in `directory`, creating the directory and database when `create` is
    /// set, and brings its schema up to date.
    /// - Throws: `StoreError.missingStore` when there is none and `create` is false;
    ///   `.incompatibleStore` for a store from a newer tool.
    public static func open(_ directory: String, create: Bool) throws -> PulseStore {
        let path = directory + "/" + databaseFileName
        if !PrivateFiles.exists(path) {
            guard create else {
                throw StoreError(.missingStore, "there is no store at \(directory) (no \(databaseFileName)); create one with `pulse-archive import` or `pulse-archive demo`")
            }
            try PrivateFiles.createDirectory(directory)
            // Created first with 0600 so SQLite's journal and WAL files inherit the mode.
            try PrivateFiles.touch(path)
        }
        let database = try SQLiteDatabase(path: path, create: false)
        try configure(database, durable: true)
        try StoreMigration.migrate(database)
        return PulseStore(directory: directory, database: database)
    }

    /// Whether the store in `directory` was written by an earlier version, so that the next
    /// command to open it upgrades it first (`StoreMigration`; once, in one transaction). False
    /// when there is no store, and for a store this version or a newer one wrote.
    public static func needsUpgrade(_ directory: String) -> Bool {
        let path = directory + "/" + databaseFileName
        guard PrivateFiles.exists(path), let database = try? SQLiteDatabase(path: path, create: false),
              let version = try? database.integer("PRAGMA user_version") else { return false }
        return version > 0 && version < StoreMigration.all.count
    }

    /// Makes a staged database the store's database (the store must be empty): the staged file
    /// already has the store's schema and every row, so this renames it into place instead of
    /// copying the rows again. Flushed before the rename, which is atomic: a crash leaves the
    /// empty store or the full one.
    func promote(_ staged: SQLiteDatabase, at stagedPath: String) throws {
        staged.close()
        try PrivateFiles.sync(stagedPath)
        try database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        database.close()
        guard rename(stagedPath, databasePath) == 0 else {
            let reason = errnoText()
            database = try SQLiteDatabase(path: databasePath, create: false)
            try Self.configure(database, durable: true)
            throw StoreError(.io, "cannot move the imported database into \(directory): \(reason)")
        }
        try PrivateFiles.sync(directory)
        database = try SQLiteDatabase(path: databasePath, create: false)
        try Self.configure(database, durable: true)
        try StoreMigration.migrate(database)
    }

    /// Runs `body` on the store in `directory` while holding its lock, so no import or export
    /// of the same store runs meanwhile.
    /// - Parameter create: create the store (directory and database) when it is missing.
    public static func withExclusiveAccess<T>(_ directory: String, create: Bool, _ body: (PulseStore) throws -> T) throws -> T {
        if create {
            try PrivateFiles.createDirectory(directory)
        } else if !PrivateFiles.exists(directory + "/" + databaseFileName) {
            throw StoreError(.missingStore, "there is no store at \(directory) (no \(databaseFileName)); create one with `pulse-archive import` or `pulse-archive demo`")
        }
        let lock = try StoreLock(directory: directory)
        defer { withExtendedLifetime(lock) {} }
        let store = try open(directory, create: create)
        try store.completePendingDocumentSwaps()
        return try body(store)
    }

    static func configure(_ database: SQLiteDatabase, durable: Bool) throws {
        if durable {
            try database.execute("PRAGMA journal_mode = WAL")
            try database.execute("PRAGMA synchronous = FULL")
        } else {
            try database.execute("PRAGMA journal_mode = OFF")
            try database.execute("PRAGMA synchronous = OFF")
        }
        try database.execute("PRAGMA cache_size = -\(pageCacheKiB)")
    }

    /// 16 MB of page cache per connection: an import holds two, verify three.
    static let pageCacheKiB = 16_000

    /// Rows per archive table.
    public func rowCounts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for table in ArchiveTable.all {
            counts[table.key] = Int(try database.integer("SELECT count(*) FROM \(StoreSchema.quoted(table.key))"))
        }
        return counts
    }

    /// Documents in the store's tree: `splits`, `workouts`, `stubs`.
    public func documentCounts() throws -> [String: Int] {
        var counts = ["splits": 0, "workouts": 0, "stubs": 0]
        for path in try DocumentTree(scanning: directory).documents {
            counts[path.group, default: 0] += 1
        }
        return counts
    }

    /// Rows of the extension tables that hold any.
    public func extensionCounts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for table in ExtensionTable.allCases {
            let count = Int(try database.integer("SELECT count(*) FROM \(StoreSchema.quoted(table.rawValue))"))
            if count > 0 { counts[table.rawValue] = count }
        }
        return counts
    }


    /// True when no table holds a row, there are no settings or attachments, and the
    /// document tree holds no document.
    public func isEmpty() throws -> Bool {
        for name in ArchiveTable.all.map(\.key) + ExtensionTable.allCases.map(\.rawValue) + ["settings", "attachments"] {
            if try database.integer("SELECT EXISTS (SELECT 1 FROM \(StoreSchema.quoted(name)))") != 0 { return false }
        }
        return try DocumentTree(scanning: directory).documents.isEmpty
    }

    /// Every row of `table`, in insertion order.
    public func forEachRow(of table: ArchiveTable, _ body: (ArchiveRow) throws -> Void) throws {
        try StoreContent(database: database, schema: "main").forEachRow(of: table, body)
    }

    /// Settings as stored, by key.
    public func settings() throws -> [String: String] {
        var result: [String: String] = [:]
        try StoreContent(database: database, schema: "main").forEachSetting { result[$0] = $1 }
        return result
    }

    /// Attachments as stored, by name.
    public func attachments() throws -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        try StoreContent(database: database, schema: "main").forEachAttachment { result[$0] = $1 }
        return result
    }
}

/// Streams a database's tables, and the store's document tree, to the archive writer.
struct StoreContent: ArchiveContent {
    let database: SQLiteDatabase
    let schema: String
    var documents: StoreDocuments.Content? = nil

    var hasDocuments: Bool { documents != nil }

    func forEachDocument(stubs: Bool, _ body: (DocumentPath, JSONNode, [UInt8]?) throws -> Void) throws {
        try documents?.forEachDocument(stubs: stubs, body)
    }

    func forEachDocumentFile(_ body: (DocumentPath, [UInt8]) throws -> Void) throws {
        try documents?.forEachFile(body)
    }

    func extensionRowCount(_ table: ExtensionTable) throws -> Int {
        Int(try database.integer("SELECT count(*) FROM \(schema).\(StoreSchema.quoted(table.rawValue))"))
    }

    func forEachExtensionRow(_ table: ExtensionTable, _ body: (JSONNode) throws -> Void) throws {
        let statement = try database.prepare(#"SELECT "row" FROM \#(schema)."\#(table.rawValue)" ORDER BY rowid"#)
        while try statement.step() {
            try body(try JSONNode.parse(Array(statement.text(at: 0).utf8)))
        }
    }

    func rowCount(of table: ArchiveTable) throws -> Int {
        Int(try database.integer("SELECT count(*) FROM \(schema).\(StoreSchema.quoted(table.key))"))
    }

    func forEachRow(of table: ArchiveTable, _ body: (ArchiveRow) throws -> Void) throws {
        let statement = try database.prepare(StoreSchema.selectAll(table, schema: schema))
        let types = table.fields.map(\.type)
        var row = ArchiveRow(table: table)
        while try statement.step() {
            for (i, type) in types.enumerated() {
                row[i] = statement.value(at: Int32(i), as: type)
            }
            try body(row)
        }
    }

    func forEachSetting(_ body: (String, String) throws -> Void) throws {
        let statement = try database.prepare(#"SELECT "key", "value" FROM \#(schema)."settings" ORDER BY "key""#)
        while try statement.step() {
            try body(statement.text(at: 0), statement.text(at: 1))
        }
    }

    func forEachAttachment(_ body: (String, [UInt8]) throws -> Void) throws {
        let statement = try database.prepare(#"SELECT "file", "contents" FROM \#(schema)."attachments" ORDER BY "file""#)
        while try statement.step() {
            try body(statement.text(at: 0), statement.blob(at: 1))
        }
    }
}
