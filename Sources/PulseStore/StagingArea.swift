import Foundation
import PulseArchive
import PulseDocuments
import PulseSystem
import PulseSQLite

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
        do {
            try PrivateFiles.createDirectory(directory + "/archive")
            try PrivateFiles.touch(directory + "/tables.sqlite")
            self.database = try SQLiteDatabase(path: directory + "/tables.sqlite", create: false)
        } catch {
            // No deinit for an object not made: the directory goes here (it stayed beside the
            // store when the process had no descriptor left for its database).
            Self.remove(directory)
            throw error
        }
        try Self.prepare(database)
    }

    /// Gives a new staging database the store's schema, without durability.
    static func prepare(_ database: SQLiteDatabase) throws {
        try PulseStore.configure(database, durable: false)
        try StoreMigration.migrate(database)
    }

    deinit {
        guard !retained else { return }
        // Its descriptor first: a failure for want of descriptors (`ulimit -n`) left the
        // directory behind, since emptying it needs one to list it.
        database.closeIfUnused()
        Self.remove(directory)
    }

    /// Removes a staging directory; where listing it fails (no descriptor left: the failure
    /// that ended the import may be just that), by the names staging gives its own entries,
    /// which needs none, so that at least an empty staging goes.
    private static func remove(_ directory: String) {
        PrivateFiles.remove(directory)
        guard StoreFiles.exists(directory) else { return }
        for name in ["tables.sqlite", "tables.sqlite-journal", "tables.sqlite-wal", "tables.sqlite-shm"] { _ = unlink(directory + "/" + name) }
        for folder in ["archive", "tree"] { _ = rmdir(directory + "/" + folder) }
        _ = rmdir(directory)
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
        try Self.stage(reader, into: database, documents: .directory(archiveTree))
    }

    /// `stage` into any staging database (`prepare`d) and document destination: `inspect`
    /// stages where nothing has a name on disk, with the same checks.
    static func stage(_ reader: ArchiveReader, into database: SQLiteDatabase, documents: StoreDocuments.Staged) throws -> ArchiveSummary {
        try database.execute("BEGIN")
        var visitor = try BackgroundVisitor(try StagingVisitor(database: database, documents: documents))
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

    /// Stages rows another reader maps onto the archive's tables (a Gadgetbridge database),
    /// with the inserts, threads and unique-key checks of an archive's.
    /// - Parameter deliver: calls the visitor table by table.
    func stage(rows deliver: (inout BackgroundVisitor<StagingVisitor>) throws -> Void) throws {
        try database.execute("BEGIN")
        var visitor = try BackgroundVisitor(try StagingVisitor(database: database, documents: .directory(archiveTree)))
        do {
            try deliver(&visitor)
            var staged = try visitor.finish()
            try staged.endStaging()
        } catch {
            throw visitor.stop() ?? error
        }
        try database.execute("COMMIT")
    }

    /// Removes staging files a killed import left in `directory`.
    static func removeLeftovers(in directory: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names where name.hasPrefix(".staging-") {
            PrivateFiles.remove(directory + "/" + name)
        }
    }
}

