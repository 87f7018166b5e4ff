import PulseArchive

/// What an export wrote.
public struct ExportResult: Sendable {
    public var path: String
    public var formatVersion: Int64
    /// Rows written per table key.
    public var tables: [String: Int]
    public var fileBytes: Int64
    public var jsonBytes: Int64
    /// Files of the document tree that were left out (not documents, links).
    public var warnings: [ArchiveWarning]
    /// Documents written: `splits`, `workouts`, `stubs`.
    public var documents: [String: Int]
}
