import PulseArchive
import PulseDocuments
import PulseSystem

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
