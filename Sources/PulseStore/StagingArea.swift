import Foundation
import PulseArchive
import PulseDocuments
import PulseSystem

/// A scratch database with the store's schema into which an archive is read in full before
/// anything touches the store.
///
/// Staging is where the checks that need a whole table happen: the unique indexes, built once
/// the rows are in, refuse a duplicate key on disk, so memory stays flat however many rows a
/// table has. Staging is fast and not durable (no journal, no fsync): if the process dies, it
/// is simply discarded.
final class StagingArea {
    /// The staging directory: `tables.sqlite`, `archive/` (the archive's documents) and, when
    /// an import builds one, `tree/` (the store's next document tree).
    let directory: String
    let database: SQLiteDatabase
    private var retained = false

    var databasePath: String { directory + "/tables.sqlite" }
    var archiveTree: String { directory + "/archive" }
    var newTree: String { directory + "/tree" }

    /// Creates a new staging directory (which must not exist).
    init(directory: String) throws {
        self.directory = try InterruptCleanup.registering {
            PrivateFiles.remove(directory)
            try PrivateFiles.createDirectory(directory)
            return (directory, path: directory)
        }
        try PrivateFiles.createDirectory(directory + "/archive")
        try PrivateFiles.touch(directory + "/tables.sqlite")
        self.database = try SQLiteDatabase(path: directory + "/tables.sqlite", create: false)
        try PulseStore.configure(database, durable: false)
        try StoreMigration.migrate(database)
    }

    deinit {
        if !retained { PrivateFiles.remove(directory) }
    }

    /// Rows staged per table (extension tables when they hold any).
    func rowCounts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for table in ArchiveTable.all {
            counts[table.key] = Int(try database.integer("SELECT count(*) FROM \(StoreSchema.quoted(table.key))"))
        }
        for table in ExtensionTable.allCases {
            let count = Int(try database.integer("SELECT count(*) FROM \(StoreSchema.quoted(table.rawValue))"))
            if count > 0 { counts[table.rawValue] = count }
        }
        return counts
    }

    /// Keeps the directory: a committed document swap still needs it. (An interruption already
    /// leaves it alone from the commit on: `applyStaged` commits through
    /// `InterruptCleanup.keeping`.)
    func retain() { retained = true }

    /// Reads the archive into staging, checking everything an import would. The inserts run
    /// on a second thread while this one decompresses and parses; a table's indexes are built
    /// once its rows are in (`DeferredIndexes`), and its unique key is checked then.
    func stage(_ reader: ArchiveReader) throws -> ArchiveSummary {
        try database.execute("BEGIN")
        var visitor = BackgroundVisitor(try StagingVisitor(database: database, documentRoot: archiveTree))
        let summary: ArchiveSummary
        do {
            summary = try reader.read(into: &visitor)
            var staged = try visitor.finish()
            try staged.endStaging()
        } catch {
            // The inserts lag behind the reader: a problem they found came earlier in the file,
            // unless the file is of a newer format, which is reported before anything else.
            // Either way the refusal names the file, as the reader's own refusals do.
            let found = visitor.stop().flatMap { (error as? ArchiveError)?.kind != .unsupportedVersion ? $0 : nil } ?? error
            throw (found as? ArchiveError)?.naming(file: reader.path) ?? found
        }
        try database.execute("COMMIT")
        return summary
    }

    /// Removes staging files a killed import left in `directory`.
    static func removeLeftovers(in directory: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names where name.hasPrefix(".staging-") {
            PrivateFiles.remove(directory + "/" + name)
        }
    }
}

/// Inserts each row the reader delivers into the staging tables, and builds a table's indexes
/// once its rows are in (on the inserting thread, while the reader goes on with the next
/// table), turning a repeated key into the app's duplicate-entries refusal.
struct StagingVisitor: ArchiveVisitor {
    private let database: SQLiteDatabase
    private let writer: StoreRowWriter
    private let documentRoot: String
    private var indexes: DeferredIndexes

    init(database: SQLiteDatabase, documentRoot: String) throws {
        self.database = database
        writer = try StoreRowWriter(database: database)
        self.documentRoot = documentRoot
        indexes = try DeferredIndexes(dropping: database)
    }

    mutating func endTable(_ table: ArchiveTable, rowCount: Int) throws {
        try indexes.rebuild(of: table.key, repeatedKey: throwFirstRepeat)
    }

    /// Builds the indexes of the tables the archive did not have.
    mutating func endStaging() throws {
        try indexes.rebuild(repeatedKey: throwFirstRepeat)
    }

    /// Throws the app's duplicate-entries refusal for the first row of `tableKey` (in the
    /// file's order) whose key an earlier row has. Staging tables start empty, so a row's
    /// rowid is its index in the file plus one.
    private func throwFirstRepeat(in tableKey: String) throws {
        guard let table = ArchiveTable.named(tableKey) else { return }
        let key = StoreSchema.quoted(table.uniqueKey)
        let query = try database.prepare("""
            SELECT rowid, \(key), first FROM (
              SELECT rowid, \(key), row_number() OVER byKey AS n, first_value(rowid) OVER byKey AS first
              FROM \(StoreSchema.quoted(table.key)) WINDOW byKey AS (PARTITION BY \(key) ORDER BY rowid)
            ) WHERE n = 2 ORDER BY rowid LIMIT 1
            """)
        guard try query.step() else { return }
        let field = table.fields[table.uniqueKeyIndex]
        throw ArchiveError(.duplicateKey, DuplicateKeyMessage.row(table, index: Int(query.int64(at: 0)) - 1,
                                                                  key: query.value(at: 1, as: field.type),
                                                                  firstRow: Int(query.int64(at: 2)) - 1), table: table.key)
    }

    /// Written as the original bytes when the archive has them, else canonically encoded.
    mutating func visitDocument(_ path: DocumentPath, document: JSONNode, originalBytes: [UInt8]?) throws {
        try StoreDocuments.writeFile(originalBytes ?? DocumentCoder.encode(document), at: path.path, under: documentRoot)
    }

    mutating func visitDocumentFile(_ path: DocumentPath, contents: [UInt8]) throws {
        try StoreDocuments.writeFile(contents, at: path.path, under: documentRoot)
    }

    /// A repeated key is found when the table's unique index is built (`endTable`).
    mutating func visit(row: ArchiveRow, at index: Int, of table: ArchiveTable) throws {
        try writer.add(row, to: table)
    }

    mutating func visitSetting(key: String, value: String) throws {
        try writer.setSetting(key, value)
    }

    mutating func visitExtensionRow(_ table: ExtensionTable, row: JSONNode, at index: Int) throws {
        do {
            try writer.addExtensionRow(row, to: table)
        } catch let error as SQLiteStatement.StepError where error.isUniqueViolation {
            throw ArchiveError(.duplicateKey, DuplicateKeyMessage.extensionRow(table, index: index, key: .string(table.key(of: row) ?? "")), table: table.rawValue)
        }
    }

    mutating func visitAttachment(name: String, contents: [UInt8]) throws {
        try writer.addAttachment(name, contents)
    }
}
