import PulseArchive
import PulseDocuments
import PulseSQLite
import PulseSystem

/// Checks an archive without a store: everything `import` checks, in the same code path
/// (`StagingArea.stage`), so `inspect` refuses exactly the files `import` refuses. The staging
/// has no name on disk (an unnamed database, a document spool): the archive may have been
/// encrypted, and no kill may leave its rows or documents behind in clear.
public enum ArchiveValidation {
    public static func validate(_ reader: ArchiveReader) throws -> ArchiveSummary {
        let database = try SQLiteDatabase.unnamed()
        try StagingArea.prepare(database)
        return try StagingArea.stage(reader, into: database, documents: .spool(DocumentSpool(name: "inspect's staged documents")))
    }
}
