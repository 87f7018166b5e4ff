import Foundation
import PulseArchive
import PulseDocuments
import PulseSystem
import PulseSQLite

/// How an import treats a store that already holds data.
public enum ImportMode: String, Sendable {
    /// The app's semantics: the store becomes equal to the file (every table, setting and
    /// attachment), after a safety backup of what it held.
    case replace
    /// Adds the rows, settings keys and attachment names the store lacks; existing ones win.
    case merge
}

public struct ImportOptions {
    /// Required when the store is not empty.
    public var mode: ImportMode?
    public var limits: ArchiveLimits
    /// Recorded in the safety backup.
    public var appVersion: String
    /// Milliseconds since 1970: names the safety backup and stamps it.
    public var now: Int64
    public var progress: ((ReadProgress) -> Void)?
    /// The readiness backfill to run after the import; nil skips it (`--no-backfill`).
    public var backfill: BackfillRequest?
    /// Days of the backfill done, and in all.
    public var backfillProgress: ((_ done: Int, _ total: Int) -> Void)?

    public init(mode: ImportMode?, appVersion: String, now: Int64, limits: ArchiveLimits = .standard,
                backfill: BackfillRequest? = BackfillRequest(), progress: ((ReadProgress) -> Void)? = nil,
                backfillProgress: ((_ done: Int, _ total: Int) -> Void)? = nil) {
        self.mode = mode
        self.appVersion = appVersion
        self.now = now
        self.limits = limits
        self.backfill = backfill
        self.progress = progress
        self.backfillProgress = backfillProgress
    }
}

/// What an import did.
public struct ImportResult {
    /// `"new"` when the store was empty, else the mode used.
    public var mode: String
    public var summary: ArchiveSummary
    /// Rows now in the store, per table key; documents as `splits`, `workouts`, `stubs`.
    public var tables: [String: Int]
    /// Rows added by this import, per table key.
    public var inserted: [String: Int]
    /// Where the previous content was saved before a replace.
    public var safetyBackupPath: String?
    public var warnings: [ArchiveWarning]
    /// The readiness backfill that followed, unless it was skipped.
    public var readiness: BackfillReport?
}

extension PulseStore {
    /// Restores an archive into the store in `storeDirectory`, all or nothing.
    ///
    /// The whole archive is read and checked into a staging database beside the store first;
    /// only then, in one transaction, does the store change. Any failure, including kill -9,
    /// leaves `pulse.sqlite` as it was. A store directory this call created is removed again
    /// when the import fails.
    public static func importArchive(_ archivePath: String, storeDirectory: String, options: ImportOptions) throws -> ImportResult {
        try importArchive(.file(archivePath), storeDirectory: storeDirectory, options: options)
    }

    /// Restores an archive from any input (a pipe too: it is read once, front to back).
    public static func importArchive(_ input: ArchiveInput, storeDirectory: String, options: ImportOptions) throws -> ImportResult {
        try importing(into: storeDirectory, options: options) { store, didCommit in
            try store.importLocked(input, options: options, didCommit: didCommit)
        }
    }

    /// What every import shares around its own staging and apply: the store directory (created,
    /// and removed again when the import that created it fails), the exclusive lock (which
    /// removes a killed import's staging), and the readiness backfill after the commit.
    /// - Parameter body: stages and applies; calls its `didCommit` once the store has committed.
    static func importing(into storeDirectory: String, options: ImportOptions,
                          _ body: (PulseStore, _ didCommit: () -> Void) throws -> ImportResult) throws -> ImportResult {
        // Until the import commits, a store directory it creates is as temporary as its staging,
        // and so are the missing parents it creates, while they are empty. Created means this
        // process's mkdir made it: two imports into one new store both saw it missing, and the
        // one refused as busy removed it under the other.
        let createdDirectory = try PrivateFiles.createTemporaryDirectoryIfMissing(storeDirectory)
        var committed = false
        var locked = false
        do {
            return try withExclusiveAccess(storeDirectory, create: true, activity: "an import") { store in
                locked = true
                var result = try body(store) { committed = true }
                if let backfill = options.backfill {
                    do {
                        result.readiness = try backfill.run(on: store, now: options.now, progress: options.backfillProgress)
                    } catch {
                        throw StoreError(.backfillFailed, "the archive was imported, but the readiness backfill failed: \(error)")
                    }
                    result.tables = try store.allCounts()
                }
                return result
            }
        } catch {
            // Only a store this import created and never filled is removed again, and never
            // one that another command holds: refused as busy, it is that command's.
            if let createdDirectory {
                if !committed && (locked || (error as? StoreError)?.kind != .busy) {
                    PrivateFiles.removeCreated(createdDirectory)
                } else {
                    InterruptCleanup.unregister(createdDirectory.path)
                }
            }
            throw error
        }
    }

    /// - Parameter didCommit: called once the store's transaction has committed.
    private func importLocked(_ input: ArchiveInput, options: ImportOptions, didCommit: () -> Void) throws -> ImportResult {
        let wasEmpty = try isEmpty()
        if !wasEmpty && options.mode == nil {
            throw StoreError(.storeNotEmpty, "the store \(directory) already holds data")
        }
        let stagingName = ".staging-\(getpid())"
        let staging = try StagingArea(directory: directory + "/" + stagingName)
        var reader = ArchiveReader(input, limits: options.limits, progress: options.progress)
        reader.spillDirectory = staging.directory
        let summary = try staging.stage(reader)
        TestPausePoint.reached("import.staged")
        let mode = options.mode ?? .replace
        var backupPath: String?
        let inserted = try applyStaged(staging, summary: summary, mode: mode, intoEmptyStore: wasEmpty, now: options.now, backfillFollows: options.backfill != nil, beforeCommit: {
            if mode == .replace && !wasEmpty { backupPath = try writeSafetyBackup(options: options) }
        }, didCommit: didCommit)
        var warnings = summary.warnings
        for mismatch in summary.countMismatches {
            let declared = mismatch.declared.map(String.init) ?? "no count"
            warnings.append(ArchiveWarning(table: mismatch.table, message: "\(mismatch.table): the file declares \(declared) but holds \(mismatch.found) rows"))
        }
        return ImportResult(mode: wasEmpty ? "new" : mode.rawValue, summary: summary, tables: try allCounts(),
                            inserted: inserted, safetyBackupPath: backupPath, warnings: warnings, readiness: nil)
    }

    /// Applies a staged archive: builds the next document tree, runs `beforeCommit` (the safety
    /// backup), copies the tables in one transaction with the document swap recorded, then
    /// swaps the tree in. The staging directory must be inside the store's directory.
    /// - Parameter didCommit: called once the transaction has committed: from then on the store
    ///   holds the archive, even if completing the document swap fails.
    /// - Returns: rows added per table.
    /// - Parameter backfillFollows: a readiness backfill runs after the commit, which an
    ///   interruption past the commit leaves undone (its announcement says so).
    /// - Parameter inTransaction: runs in the merge's transaction after the copies, staging attached.
    func applyStaged(_ staging: StagingArea, summary: ArchiveSummary, mode: ImportMode, intoEmptyStore: Bool, now: Int64, backfillFollows: Bool,
                     beforeCommit: () throws -> Void, inTransaction: () throws -> Void = {}, didCommit: () -> Void) throws -> [String: Int] {
        // An archive without the document keys (the app's own) leaves the tree as it is.
        if summary.hasDocuments {
            let existing = try DocumentTree(scanning: directory)
            try StoreDocuments.requireSafe(existing)
            switch mode {
            case .replace:
                try StoreDocuments.buildReplacement(archive: staging.archiveTree, existing: existing, into: staging.newTree)
            case .merge:
                try StoreDocuments.requireNoCaseCollision(existing)
                try StoreDocuments.buildMerge(archive: try DocumentTree(scanning: staging.archiveTree), existing: existing,
                                              into: staging.newTree, now: now)
            }
        }
        try beforeCommit()
        // The staging directory holds the next document tree, which the commit records as a
        // swap to finish, and the store's directory may be new: once committed, an interruption
        // leaves both (the next command finishes the swap, as after kill -9). Without a swap,
        // the staging directory is garbage once committed, and an interruption still removes it.
        let kept = summary.hasDocuments ? [staging.directory, directory] : [directory]
        let outcome = !backfillFollows ? "the store holds the archive"
            : "the store holds the archive, but the readiness backfill that follows did not run"
        let committing = { (commit: () throws -> Void) in try InterruptCleanup.keeping(kept, committing: outcome, during: commit) }
        let stagingName = String(staging.directory.dropFirst(directory.count + 1))
        let inserted: [String: Int]
        if intoEmptyStore {
            inserted = try staging.rowCounts()
            if summary.hasDocuments {
                try staging.database.prepare(#"INSERT INTO "documentSwaps" ("staging") VALUES (?)"#).run([.string(stagingName)])
            }
            try committing { try promote(staging.database, at: staging.databasePath) }
        } else {
            inserted = try apply(staging, mode: mode, documentSwap: summary.hasDocuments ? stagingName : nil, committing: committing, inTransaction: inTransaction)
        }
        didCommit()
        TestPausePoint.reached("import.committed")
        if summary.hasDocuments {
            do {
                try completePendingDocumentSwaps()
            } catch {
                staging.retain()
                throw StoreError(.io, "the archive was imported, but its document tree could not be moved into place (\(error)); whatever opens this store next finishes it")
            }
        }
        return inserted
    }

    func allCounts() throws -> [String: Int] {
        try rowCounts().merging(documentCounts()) { a, _ in a }.merging(extensionCounts()) { a, _ in a }
    }

    /// Saves the store as it is into `backups/` before a replace.
    /// - Throws: an error that says the safety backup failed and the store is unchanged: the
    ///   export's own message alone reads as if the user had asked for an export.
    func writeSafetyBackup(options: ImportOptions) throws -> String {
        let backups = directory + "/" + Self.backupsDirectoryName
        do {
            // The backup is the store's own file: a `backups` link would put it wherever the
            // link points, outside the store.
            var info = stat()
            if lstat(backups, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
                throw StoreFiles.linkError(backups, name: Self.backupsDirectoryName)
            }
            // Made for the backup, it goes again with a backup that fails or is interrupted.
            let made = try PrivateFiles.createDirectoryRemovedIfEmpty(backups)
            do {
                let path = try exportSafetyBackup(into: backups, options: options)
                // It holds the backup now: nothing an interruption removes.
                for folder in made { InterruptCleanup.unregister(folder) }
                return path
            } catch {
                PrivateFiles.removeWhileEmpty(made)
                throw error
            }
        } catch {
            let message = "the safety backup of the store, which an import that replaces it writes into \(backups) before it changes anything, failed: \(error); the store is unchanged"
            // A limit the store's values pass keeps its kind and name, so that a front end can
            // say which option raises it (the same options raise the import's own read).
            if let error = error as? ArchiveError, error.kind == .limitExceeded {
                throw ArchiveError(.limitExceeded, message, table: error.table, limit: error.limit)
            }
            throw StoreError(.io, message)
        }
    }

    private func exportSafetyBackup(into backups: String, options: ImportOptions) throws -> String {
        let stamp = try ArchiveDate.format(options.now)
            .replacingOccurrences(of: ":", with: "-").replacingOccurrences(of: ".", with: "-")
        let path = "\(backups)/before-replace-\(stamp).json.gz"
        _ = try export(to: AtomicFile(targetPath: path), alternatives: [], options: ExportOptions(appVersion: options.appVersion, exportedAt: options.now, limits: options.limits))
        return path
    }

    /// Moves the staged content into the store in one transaction, recording the document
    /// swap (when there is one) in the same transaction.
    /// - Parameter committing: runs the transaction's COMMIT.
    private func apply(_ staging: StagingArea, mode: ImportMode, documentSwap: String?,
                       committing: (_ commit: () throws -> Void) throws -> Void, inTransaction: () throws -> Void) throws -> [String: Int] {
        try database.attach(staging.databasePath, as: "staging")
        defer { try? database.execute("DETACH DATABASE staging") }
        return try database.transaction(committing: committing) {
            if let documentSwap {
                try database.prepare(#"INSERT INTO main."documentSwaps" ("staging") VALUES (?)"#).run([.string(documentSwap)])
            }
            // A replace refills every table: its indexes are built after the rows, as staging's.
            var indexes = mode == .replace ? try DeferredIndexes(dropping: database) : nil
            var inserted: [String: Int] = [:]
            for table in ArchiveTable.all {
                inserted[table.key] = try copy(StoreSchema.quoted(table.key), columns: StoreSchema.columnList(table), mode: mode)
            }
            for table in ExtensionTable.allCases {
                let copied = try copy(StoreSchema.quoted(table.rawValue), columns: "\(StoreSchema.quoted(table.uniqueKey)), \"row\"", mode: mode)
                if copied > 0 { inserted[table.rawValue] = copied }
            }
            _ = try copy(#""settings""#, columns: #""key", "value""#, mode: mode)
            // Large attachments in pieces: SQL's copy would hold each one whole.
            _ = try copy(#""attachments""#, columns: #""file", "contents""#, mode: mode,
                         where: #"length("contents") <= \#(ArchiveBytes.inlineLimit)"#)
            _ = try StoreAttachments.copyLarge(in: database, from: "staging", orIgnore: mode == .merge)
            // Staging found no repeated key, and the store's tables were emptied.
            try indexes?.rebuild(repeatedKey: { _ in })
            try inTransaction()
            return inserted
        }
    }

    private func copy(_ table: String, columns: String, mode: ImportMode, where condition: String? = nil) throws -> Int {
        let filter = condition.map { " WHERE \($0)" } ?? ""
        switch mode {
        case .replace:
            try database.execute("DELETE FROM main.\(table)")
            try database.execute("INSERT INTO main.\(table) (\(columns)) SELECT \(columns) FROM staging.\(table)\(filter) ORDER BY rowid")
        case .merge:
            try database.execute("INSERT OR IGNORE INTO main.\(table) (\(columns)) SELECT \(columns) FROM staging.\(table)\(filter) ORDER BY rowid")
        }
        return database.changes
    }
}
