import PulseArchive
import PulseDocuments
import PulseSystem

/// How to write an archive of a store.
public struct ExportOptions {
    public var formatVersion: Int64
    public var appVersion: String
    /// Milliseconds since 1970, recorded as `exportedAt`.
    public var exportedAt: Int64
    /// Compress with gzip (our format) or write plain JSON (the app's own).
    public var compressed: Bool
    /// See `ArchiveWriterOptions.envelopeKeysFirst`.
    public var envelopeKeysFirst: Bool
    /// Called every few thousand rows with the rows written and the total.
    public var progress: ((Int, Int) -> Void)?
    /// See `ArchiveWriterOptions.limits`: raised, the archive needs the same limits to import.
    public var limits: ArchiveLimits

    public init(formatVersion: Int64 = ArchiveFormat.newestVersion, appVersion: String, exportedAt: Int64,
                compressed: Bool = true, envelopeKeysFirst: Bool = true, limits: ArchiveLimits = .standard,
                progress: ((Int, Int) -> Void)? = nil) {
        self.limits = limits
        self.formatVersion = formatVersion
        self.appVersion = appVersion
        self.exportedAt = exportedAt
        self.compressed = compressed
        self.envelopeKeysFirst = envelopeKeysFirst
        self.progress = progress
    }
}

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

extension PulseStore {
    /// Writes an archive of the whole store to `path`, atomically: the file appears complete
    /// or not at all. Reads the store read-only, under its shared lock.
    public static func exportArchive(storeDirectory: String, to path: String, options: ExportOptions) throws -> ExportResult {
        try withReadAccess(storeDirectory) { store in
            try store.export(to: path, options: options)
        }
    }

    /// Writes an archive of this store; the caller holds the lock.
    func export(to path: String, options: ExportOptions) throws -> ExportResult {
        let tree = try DocumentTree(scanning: directory)
        try StoreDocuments.requireExportable(tree, limits: options.limits)
        let target = try AtomicFile(targetPath: path)
        let fileSink = FileSink(target.file)
        // JSON is produced on this thread while the second core compresses.
        let counter = ByteCounter(next: options.compressed ? BackgroundSink(next: try GzipWriter(output: fileSink)) : fileSink)
        let documents = StoreDocuments.Content(tree: tree)
        // One read transaction: the archive is a snapshot even if the store changes meanwhile.
        let tables = try database.transaction(immediate: false) {
            try ArchiveWriter.write(
                StoreContent(database: database, schema: "main", documents: documents),
                options: ArchiveWriterOptions(formatVersion: options.formatVersion, appVersion: options.appVersion,
                                              exportedAt: options.exportedAt, envelopeKeysFirst: options.envelopeKeysFirst,
                                              limits: options.limits),
                to: counter, progress: options.progress)
        }
        try target.commit()
        var documentCounts: [String: Int] = [:]
        for path in documents.tree.documents {
            documentCounts[path.group, default: 0] += 1
        }
        return ExportResult(path: path, formatVersion: options.formatVersion, tables: tables,
                            fileBytes: fileSink.bytesWritten, jsonBytes: counter.count,
                            warnings: documents.warnings, documents: documentCounts)
    }
}

/// Counts the uncompressed bytes on their way to the next sink.
final class ByteCounter: ByteSink {
    private let next: ByteSink
    private(set) var count: Int64 = 0

    init(next: ByteSink) { self.next = next }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        count += Int64(bytes.count)
        try next.write(bytes)
    }

    func finish() throws { try next.finish() }
}
