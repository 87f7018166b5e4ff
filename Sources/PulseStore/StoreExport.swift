import PulseArchive
import PulseDocuments
import PulseSystem
import PulseSQLite

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
            case .newFile(let directory, let stem, let suffix, let firstAttempt, let lastAttempt):
                guard firstAttempt <= lastAttempt else {
                    throw StoreError(.refused, "\(directory) holds an archive named \(stem) with the last number this scheme has; choose another name")
                }
                let tried = firstAttempt...(firstAttempt + min(ExportDestination.attempts - 1, lastAttempt - firstAttempt))
                let names = tried.map {
                    ExportDestination.candidate(directory: directory, stem: stem, suffix: suffix, attempt: $0)
                }
                // A name free when looked at can be taken before the partial file is made (a
                // concurrent export's commit, its placeholder on a USB stick): the next is tried,
                // as the commit itself does. (20 exports at once into a vfat folder: up to 13
                // failed with "already exists".)
                for (index, name) in names.enumerated() where !PrivateFiles.exists(name) {
                    TestPausePoint.reached("export.name")
                    let target: AtomicFile
                    do {
                        target = try AtomicFile(targetPath: name)
                    } catch let error as SystemError where error.kind == .alreadyExists {
                        continue
                    }
                    return try store.export(to: target, alternatives: names[(index + 1)...], options: options)
                }
                throw StoreError(.refused, "\(directory) already holds \(ExportDestination.attempts) archives named \(stem)…\(suffix); choose another name")
            case .stream(let sink):
                var result = try store.exportThroughScratch(options: options, sealingInScratch: options.sealing) { archive, sealed in
                    InterruptCleanup.sending("standard output received part of the archive: what read it (a pipe, a backup tool) holds an incomplete archive; discard it")
                    let written = try Self.deliver(archive, to: sink, sealing: sealed ? nil : options.sealing)
                    try InterruptCleanup.keeping([], committing: "standard output received the whole archive") {}
                    return written
                }
                result.path = "-"
                return result
            }
        }
    }

    /// Writes an archive of this store into `target`, committed under its name or, when a file
    /// of that name appeared meanwhile, under the first free one of `alternatives`; the caller
    /// holds the lock. A sealed archive is written in the same one pass when the sealing can
    /// rewrite what it was given (age over a file: the gzip header's checksum goes into the
    /// first chunk, sealed last), else plain to a scratch file first.
    func export(to target: AtomicFile, alternatives: some Sequence<String>, options: ExportOptions) throws -> ExportResult {
        let fileSink = FileSink(target.file)
        guard let sealed = try options.sealing?(fileSink, nil) else {
            return try exportPlain(to: target, through: fileSink, counting: fileSink, alternatives: alternatives, options: options)
        }
        if let rewritable = sealed as? RewritableSink {
            return try exportPlain(to: target, through: rewritable, counting: fileSink, alternatives: alternatives, options: options)
        }
        var committedPath = target.targetPath
        var result = try exportThroughScratch(options: options, sealingInScratch: nil) { archive, _ in
            try archive.copy(to: sealed)
            try sealed.finish()
            try target.file.setModificationTime(millisecondsSince1970: options.exportedAt)
            committedPath = try target.commit(alternatives: alternatives)
            return fileSink.bytesWritten
        }
        result.path = committedPath
        return result
    }

    /// Hands `body` what an export of the store writes, in one read transaction: the content is
    /// a snapshot even if the store changes meanwhile. The document tree is checked first, as
    /// export checks it.
    private func withSnapshot<T>(limits: ArchiveLimits, _ body: (StoreContent, StoreDocuments.Content) throws -> T) throws -> T {
        let tree = try DocumentTree(scanning: directory)
        try StoreDocuments.requireExportable(tree, limits: limits)
        let documents = StoreDocuments.Content(tree: tree, limits: limits)
        return try database.transaction(immediate: false) {
            try body(StoreContent(database: database, schema: "main", documents: documents), documents)
        }
    }

    /// Reads the whole store as an export does (`tables --store`): `body` gets the same content,
    /// from one snapshot, under the store's shared lock; the store is opened read-only.
    /// - Parameter warn: called first with what an export would warn of (files of the document
    ///   tree it leaves out).
    public static func readSnapshot<T>(storeDirectory: String, limits: ArchiveLimits = .standard, warn: (ArchiveWarning) -> Void = { _ in },
                                       _ body: (any ArchiveContent) throws -> T) throws -> T {
        try withReadAccess(storeDirectory) { store in
            try store.withSnapshot(limits: limits) { content, documents in
                documents.warnings.forEach(warn)
                return try body(content)
            }
        }
    }

    /// Copies a finished archive into `sink`, through `sealing` if given; returns the bytes
    /// `sink` received.
    /// A failure once bytes went out (the reader gone: `export -o - | head`) says so: the
    /// reader holds part of an archive, which "Broken pipe" alone did not tell.
    private static func deliver(_ archive: SystemFile, to sink: ByteSink, sealing: ExportOptions.Sealing?) throws -> Int64 {
        let counter = ByteCounter(next: sink)
        do {
            let output = try sealing?(counter, archive.size()) ?? counter
            try archive.copy(to: output)
            try output.finish()
        } catch let error as SystemError {
            // The bytes the system took, not those handed to the sink: `> /dev/full` took none
            // of the megabyte whose write failed.
            let received = (sink as? FileSink)?.bytesWritten ?? counter.count
            guard received > 0 else { throw error }
            throw SystemError(error.kind, "\(error.message); standard output received \(received) bytes, part of the archive: what read them holds an incomplete archive; discard it")
        }
        return counter.count
    }

    /// Writes the archive to a private scratch file (the gzip header carries a checksum of what
    /// follows it, written last, so it needs a file it can rewrite), then hands the finished
    /// file to `deliver`, which returns the bytes it wrote; `sealed` says the file holds the
    /// archive already encrypted. The file has no name from the moment it exists
    /// (`SystemFile.createUnnamed`), and a SIGKILL leaves none of it in `$TMPDIR`.
    /// - Parameter sealingInScratch: an encryption to apply in the file when it can rewrite
    ///   what it was given (age over a file can), so that no byte of the archive in clear
    ///   reaches a disk (`export -o - -r KEY` wrote it there in clear, unnamed); without one,
    ///   the file holds it plain, for `deliver` to seal.
    private func exportThroughScratch(options: ExportOptions, sealingInScratch: ExportOptions.Sealing?,
                                      deliver: (_ archive: SystemFile, _ sealed: Bool) throws -> Int64) throws -> ExportResult {
        let scratch = try PrivateFiles.unnamedFile("the export's scratch file")
        let fileSink = FileSink(scratch)
        var result: ExportResult
        var sealed = false
        if let sealing = sealingInScratch {
            // Age over a file always can; a sealing that could not would have begun the file.
            guard let rewritable = try sealing(fileSink, nil) as? RewritableSink else {
                throw StoreError(.io, "cannot stage an encrypted archive for standard output: its encryption cannot rewrite what it wrote")
            }
            result = try writeArchive(through: rewritable, counting: fileSink, options: options)
            sealed = true
        } else {
            var plain = options
            plain.sealing = nil
            result = try writeArchive(through: fileSink, counting: fileSink, options: plain)
        }
        try scratch.rewind()
        result.fileBytes = try deliver(scratch, sealed)
        try scratch.close()
        return result
    }

    /// Writes the archive into `output` (the target's file, or a sealing of it), then commits
    /// `target`; `fileSink` counts the bytes the file received.
    private func exportPlain(to target: AtomicFile, through output: RewritableSink, counting fileSink: FileSink,
                             alternatives: some Sequence<String>, options: ExportOptions) throws -> ExportResult {
        var result = try writeArchive(through: output, counting: fileSink, options: options)
        // The file's time is the export's instant, like the gzip header's: what `prune` orders
        // an encrypted backup by, having no key to read more (docs/backups.md).
        try target.file.setModificationTime(millisecondsSince1970: options.exportedAt)
        result.path = try target.commit(alternatives: alternatives)
        return result
    }

    /// Writes the archive into `output`; `fileSink` counts the bytes the file received. The
    /// result names no path yet.
    private func writeArchive(through output: RewritableSink, counting fileSink: FileSink, options: ExportOptions) throws -> ExportResult {
        // JSON is produced on this thread while the deflate threads compress.
        let gzip = {
            try GzipWriter(output: output, modificationTime: GzipWriter.headerTime(millisecondsSince1970: options.exportedAt),
                           threads: options.compressionThreads, rsyncable: options.rsyncable)
        }
        let counter = ByteCounter(next: options.compressed ? try gzip() : output)
        let (tables, documents) = try withSnapshot(limits: options.limits) { content, documents in
            (try ArchiveWriter.write(
                content,
                options: ArchiveWriterOptions(formatVersion: options.formatVersion, appVersion: options.appVersion,
                                              exportedAt: options.exportedAt, envelopeKeysFirst: options.envelopeKeysFirst,
                                              limits: options.limits),
                to: counter, progress: options.progress), documents)
        }
        var documentCounts: [String: Int] = [:]
        for path in documents.tree.documents {
            documentCounts[path.group, default: 0] += 1
        }
        return ExportResult(path: "", formatVersion: options.formatVersion, tables: tables,
                            fileBytes: fileSink.bytesWritten, jsonBytes: counter.count,
                            warnings: documents.warnings, documents: documentCounts)
    }
}
