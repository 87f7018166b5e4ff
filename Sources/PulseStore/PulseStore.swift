import Foundation
import PulseArchive
import PulseDocuments
import PulseSystem
import PulseSQLite

/// A store: one directory holding `pulse.sqlite` (every archive table, the settings and the
/// attachments), created private to its owner.
public final class PulseStore {
    public static let databaseFileName = "pulse.sqlite"
    public static let backupsDirectoryName = "backups"

    public let directory: String
    /// Replaced only when an import into an empty store promotes its staged database.
    private(set) var database: SQLiteDatabase

    public var databasePath: String { directory + "/" + Self.databaseFileName }

    /// Whether `database` was opened immutable (`withReadAccess` on a store nobody can
    /// write): another connection reading the store must open it so too.
    package let isImmutable: Bool

    private init(directory: String, database: SQLiteDatabase, isImmutable: Bool = false) {
        self.directory = directory
        self.database = database
        self.isImmutable = isImmutable
    }

    /// Opens the store in `directory`, creating the directory and database when `create` is
    /// set, and brings its schema up to date.
    /// - Throws: `StoreError.missingStore` when there is none and `create` is false;
    ///   `.newerStore` for a store from a newer version.
    public static func open(_ directory: String, create: Bool) throws -> PulseStore {
        let path = directory + "/" + databaseFileName
        try StoreFiles.requireRegularFiles(in: directory)
        if try !StoreFiles.databaseExists(path, store: directory) {
            guard create else {
                throw StoreError(.missingStore, "there is no store at \(directory) (no \(databaseFileName))")
            }
            try PrivateFiles.createDirectory(directory)
            // Created first with 0600 so SQLite's journal and WAL files inherit the mode.
            try PrivateFiles.touch(path)
        }
        let database = try SQLiteDatabase(path: path, create: false)
        // Before anything is set on the file (the WAL mode is written into it): a database of
        // another program is left exactly as it is.
        try StoreMigration.requireKnown(Int(try database.integer("PRAGMA user_version")), in: database)
        try configure(database, durable: true)
        try StoreMigration.migrate(database)
        if let problem = try StoreSchema.readabilityProblem(in: database) {
            throw StoreError(.incompatibleStore, "cannot use the store \(directory): \(problem) (was the store edited by another program?)")
        }
        return PulseStore(directory: directory, database: database)
    }

    /// Whether the store in `directory` was written by an earlier version, so that the next
    /// command to open it upgrades it first (`StoreMigration`; once, in one transaction). False
    /// when there is no store, and for a store this version or a newer one wrote.
    public static func needsUpgrade(_ directory: String) -> Bool {
        guard StoreFiles.exists(directory + "/" + databaseFileName), (try? StoreFiles.requireRegularFiles(in: directory)) != nil,
              let (database, _) = try? openReadOnly(directory),
              let version = try? database.integer("PRAGMA user_version") else { return false }
        return version > 0 && version < StoreMigration.all.count
    }

    /// Opens the database of the store in `directory` without writing to it: read-only, and
    /// immutable when the directory cannot be written and no WAL holds changes (SQLite cannot
    /// open a WAL database read-only there otherwise).
    /// - Returns: the connection, and whether it is immutable.
    static func openReadOnly(_ directory: String) throws -> (SQLiteDatabase, immutable: Bool) {
        let path = directory + "/" + databaseFileName
        let immutable = !StoreFiles.isWritable(directory) && !StoreFiles.walHasContent(in: directory)
        let database = try SQLiteDatabase(path: path, create: false, access: immutable ? .immutable : .readOnly)
        do {
            // Opening is lazy: the first read finds out whether SQLite can read the file.
            _ = try database.integer("SELECT count(*) FROM sqlite_master")
        } catch {
            if !immutable && !StoreFiles.isWritable(directory) {
                throw StoreError(.readOnlyStore, """
                    cannot read the store \(directory): its \(StoreFiles.wal) holds changes not yet in \(databaseFileName), and \
                    SQLite reads them only through a \(databaseFileName)-shm file, which is missing and cannot be created in this \
                    read-only directory; copy the whole store directory somewhere writable and run the command on the copy
                    """)
            }
            throw error
        }
        return (database, immutable)
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

    /// Runs `body` on the store in `directory` while holding its lock exclusively, so no other
    /// command reads or writes the same store meanwhile. What a killed import left (its
    /// `.staging-<pid>`, decrypted rows of an encrypted archive perhaps) is removed first, once
    /// a document swap it recorded has been finished; `withReadAccess` does the same.
    /// - Parameters:
    ///   - create: create the store (directory and database) when it is missing.
    ///   - activity: what this does, for the message of a command refused meanwhile.
    public static func withExclusiveAccess<T>(_ directory: String, create: Bool, activity: String = "another command",
                                              _ body: (PulseStore) throws -> T) throws -> T {
        if create {
            try PrivateFiles.createDirectory(directory)
        }
        try StoreFiles.requireRegularFiles(in: directory)
        if !create { try requireStore(directory) }
        let lock = try StoreLock(directory: directory, activity: activity)
        defer { withExtendedLifetime(lock) {} }
        let store = try open(directory, create: create)
        try store.completePendingDocumentSwaps()
        StagingArea.removeLeftovers(in: directory)
        return try body(store)
    }

    /// Runs `body` on the store in `directory` opened read-only, holding its lock shared: other
    /// readers may run beside it, no writer. A read-only directory or snapshot can be read.
    ///
    /// A store that must change first (an earlier version's schema, a document swap an
    /// interrupted import left to finish) is brought up to date under the exclusive lock when
    /// it can be written, and refused when it cannot: reading it through an old schema would
    /// need a reader per schema version, and a half-swapped tree is not the store's content.
    public static func withReadAccess<T>(_ directory: String, _ body: (PulseStore) throws -> T) throws -> T {
        var upgraded = false
        while true {
            try StoreFiles.requireRegularFiles(in: directory)
            try requireStore(directory)
            let reason: String
            do {
                let (store, lock, why) = try openForReading(directory)
                if let store {
                    defer { withExtendedLifetime(lock) {} }
                    // No import runs (the lock), and no document swap waits (it would have
                    // been finished first): any staging is a killed import's.
                    if StoreFiles.isWritable(directory) { StagingArea.removeLeftovers(in: directory) }
                    return try body(store)
                }
                reason = why
            }
            // The shared lock is released here: the upgrade takes it exclusively.
            guard !upgraded else {
                throw StoreError(.incompatibleStore, "cannot read the store \(directory): \(reason), and upgrading it did not change that")
            }
            guard StoreFiles.isWritable(directory), access(directory + "/" + databaseFileName, W_OK) == 0 else {
                throw StoreError(.readOnlyStore, "cannot read the store \(directory): \(reason), which needs the store to be written, and it cannot be (a read-only directory or snapshot); copy the whole store directory somewhere writable and run the command on the copy")
            }
            try withExclusiveAccess(directory, create: false, activity: "an upgrade of the store") { _ in }
            upgraded = true
        }
    }

    /// The store opened read-only under a shared lock, or why it must be written first.
    private static func openForReading(_ directory: String) throws -> (PulseStore?, StoreLock, String) {
        let lock = try StoreLock(directory: directory, shared: true)
        let (database, immutable) = try openReadOnly(directory)
        let version = Int(try database.integer("PRAGMA user_version"))
        try StoreMigration.requireKnown(version, in: database)
        if version < StoreMigration.all.count {
            return (nil, lock, "it was written by an earlier version (schema version \(version); this version reads \(StoreMigration.all.count)) and must be upgraded first")
        }
        if let problem = try StoreSchema.readabilityProblem(in: database) {
            throw StoreError(.incompatibleStore, "cannot read the store \(directory): \(problem) (was the store edited by another program?)")
        }
        if try database.integer(#"SELECT EXISTS (SELECT 1 FROM "documentSwaps")"#) != 0 {
            return (nil, lock, "an import into it was interrupted after its commit, and its document tree must be moved into place first")
        }
        return (PulseStore(directory: directory, database: database, isImmutable: immutable), lock, "")
    }

    private static func requireStore(_ directory: String) throws {
        if try !StoreFiles.databaseExists(directory + "/" + databaseFileName, store: directory) {
            throw StoreError(.missingStore, "there is no store at \(directory) (no \(databaseFileName))")
        }
    }

    package static func configure(_ database: SQLiteDatabase, durable: Bool) throws {
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
        try StoreContent(database: database, schema: "main").forEachAttachment { result[$0] = try $1.collected() }
        return result
    }
}
