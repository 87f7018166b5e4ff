import PulseArchive
import PulseDocuments
import PulseSystem

extension PulseStore {
    /// Writes an archive of the whole store to `path`, atomically: the file appears complete
    /// or not at all. Reads the store read-only, under its shared lock.
    public static func exportArchive(storeDirectory: String, to path: String, options: ExportOptions) throws -> ExportResult {
        try exportArchive(storeDirectory: storeDirectory, to: .file(path), options: options)
    }

    /// Writes an archive of the whole store to `destination`; a file appears complete or not at
    /// all, a stream gets the archive only once it is complete.
    public static func exportArchive(storeDirectory: String, to destination: ExportDestination, options: ExportOptions) throws -> ExportResult {
        try withReadAccess(storeDirectory) { store in
            switch destination {
            case .file(let path):
                return try store.export(to: AtomicFile(targetPath: path), alternatives: [], options: options)
            case .newFile(let directory, let stem, let suffix):
                let names = (1...ExportDestination.attempts).lazy.map {
                    ExportDestination.candidate(directory: directory, stem: stem, suffix: suffix, attempt: $0)
                }
                guard let free = names.first(where: { !PrivateFiles.exists($0) }) else {
                    throw StoreError(.refused, "\(directory) already holds \(ExportDestination.attempts) archives named \(stem)…\(suffix); choose another name")
                }
                return try store.export(to: AtomicFile(targetPath: free), alternatives: names.drop { $0 != free }.dropFirst(), options: options)
            case .stream(let sink):
                let scratch = try PrivateFiles.temporaryDirectory(prefix: "pulse-archive-export")
                defer { PrivateFiles.remove(scratch) }
                var result = try store.export(to: AtomicFile(targetPath: scratch + "/archive"), alternatives: [], options: options)
                try SystemFile.openForReading(result.path, followingLinks: false).copy(to: sink)
                try sink.finish()
                result.path = "-"
                return result
            }
        }
    }

    /// Writes an archive of this store into `target`, committed under its name or, when a file
    /// of that name appeared meanwhile, under the first free one of `alternatives`; the caller
    /// holds the lock.
    func export(to target: AtomicFile, alternatives: some Sequence<String>, options: ExportOptions) throws -> ExportResult {
        let tree = try DocumentTree(scanning: directory)
        try StoreDocuments.requireExportable(tree, limits: options.limits)
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
        let path = try target.commit(alternatives: alternatives)
        var documentCounts: [String: Int] = [:]
        for path in documents.tree.documents {
            documentCounts[path.group, default: 0] += 1
        }
        return ExportResult(path: path, formatVersion: options.formatVersion, tables: tables,
                            fileBytes: fileSink.bytesWritten, jsonBytes: counter.count,
                            warnings: documents.warnings, documents: documentCounts)
    }
}
