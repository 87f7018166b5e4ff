import PulseArchive
import PulseSystem

/// Checks an archive without a store: everything `import` checks, in the same code path
/// (a staging database in a private temporary directory), so `inspect` refuses exactly the
/// files `import` refuses.
public enum ArchiveValidation {
    public static func validate(_ reader: ArchiveReader) throws -> ArchiveSummary {
        let directory = try PrivateFiles.temporaryDirectory(prefix: "pulse-archive-inspect")
        defer { PrivateFiles.remove(directory) }
        let staging = try StagingArea(directory: directory + "/.staging")
        return try staging.stage(reader)
    }
}
