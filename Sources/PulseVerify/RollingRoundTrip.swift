import PulseArchive
import PulseDigest
import PulseDocuments
import PulseSystem
import PulseStore
import PulseSQLite

/// What one step of the round trip carries: the rows of a table or of an extension table.
enum RoundTripSection: Equatable {
    case table(ArchiveTable)
    case extensionTable(ExtensionTable)

    var name: String {
        switch self {
        case .table(let table): return table.key
        case .extensionTable(let table): return table.rawValue
        }
    }
}

/// `verify`'s round trip, a batch at a time. Rows go into a temporary store through the
/// import's own row writer, are read back with the exporter's query and compared, column by
/// column, with the rows as the archive gave them (`RowTextCheck` covers what the export then
/// writes). Extension rows, settings, attachments and documents (few) go the long way: an
/// export of the temporary store into a scratch file, read back by the reader and compared. The
/// temporary store never holds more than one batch of rows, so memory and disk stay flat
/// however large the archive. Nothing of it has a name on disk (an unnamed database, a document
/// spool, unnamed scratch files): the archive may have been encrypted, and no kill may leave
/// its rows or documents behind in clear.
final class RollingRoundTrip {
    /// Rows per batch: a few megabytes, and the temporary tables stay small.
    static let batchSize = 8192
    /// Or fewer, once the batch holds this much text or JSON: ten rows of 12 MiB strings were
    /// one batch of "ten rows" (250 MB).
    static let batchBytes = 4 << 20
    private var batchBytes = 0

    /// The temporary store's database (`StoreSchema.roundTripTables`) and document tree.
    let database: SQLiteDatabase
    let tree: DocumentSpool
    private let writer: StoreRowWriter
    /// With `verify --store`: the store, compared one batch at a time.
    let comparison: StoreComparison?
    private var section: RoundTripSection?
    /// The current table's rows in the temporary store, as read.
    private var batch: [ArchiveRow] = []
    /// What the long way must bring back.
    private var expected = RoundTripComparer.Expected()
    /// Values that did not come back as they were read, per table, `settings`, `attachments`,
    /// `documents`.
    private(set) var differences: [String: Int] = [:]
    /// Why the round trip stopped before the end: a row the temporary store refused, or an
    /// export the reader refused.
    private(set) var failure: String?
    private let limits: ArchiveLimits

    /// - Parameters:
    ///   - store: the database of the store to compare with (`verify --store`), and whether
    ///     it must be read immutable.
    ///   - limits: the read's limits, which the long way's export and read keep too.
    init(comparingWith store: (path: String, immutable: Bool)?, limits: ArchiveLimits = .standard) throws {
        self.limits = limits
        tree = DocumentSpool(name: "verify's round trip")
        let database = try SQLiteDatabase.unnamed(attachesReadOnly: store != nil)
        try PulseStore.configure(database, durable: false)
        for sql in StoreSchema.roundTripTables { try database.execute(sql) }
        self.database = database
        writer = try StoreRowWriter(database: database)
        comparison = try store.map { try StoreComparison(database: database, storePath: $0.path, immutable: $0.immutable) }
        try database.execute("BEGIN")
    }

    /// Starts a section (ending the one before).
    func begin(_ next: RoundTripSection) throws {
        guard next != section else { return }
        try flush()
        section = next
    }

    /// Ends the current section.
    func end() throws {
        try flush()
        section = nil
    }

    /// Adds a row of the current table (whose temporary table has no unique constraint: the
    /// key check reports repeats).
    func add(_ row: ArchiveRow, of table: ArchiveTable, at index: Int) throws {
        guard failure == nil else { return }
        do {
            try writer.add(row, to: table)
        } catch where MachineFailure.caused(error) {
            throw error
        } catch {
            failure = "round trip: \(table.key)[\(index)] could not be restored: \(error)"
            return
        }
        batch.append(row)
        batchBytes += row.textBytes
        if batch.count >= Self.batchSize || batchBytes >= Self.batchBytes { try flush() }
    }

    func addExtensionRow(_ row: JSONNode, of table: ExtensionTable, at index: Int) throws {
        guard failure == nil else { return }
        try begin(.extensionTable(table))
        do {
            try writer.addExtensionRow(row, to: table)
        } catch let error as SQLiteError where error.kind == .duplicateKey {
            return
        }
        expected.extensionRows.append(row)
        batchBytes += row.approximateBytes
        if expected.extensionRows.count >= Self.batchSize || batchBytes >= Self.batchBytes { try flush() }
    }

    /// - Returns: false when the key was already set (the archive repeats it).
    func addSetting(_ key: String, _ value: String) throws -> Bool {
        do {
            try writer.setSetting(key, value)
        } catch let error as SQLiteError where error.kind == .duplicateKey {
            return false
        }
        expected.settings[TextDigest(key)] = TextDigest(value)
        return true
    }

    /// - Returns: false when the name was already used (the archive repeats it).
    func addAttachment(_ name: String, _ contents: some PieceReadable) throws -> Bool {
        do {
            try writer.addAttachment(name, pieces: contents)
        } catch let error as SQLiteError where error.kind == .duplicateKey {
            return false
        }
        expected.attachments[TextDigest(name)] = try SHA1.hash(pieces: contents)
        return true
    }

    /// Writes a document file into the temporary store's tree, as an import stages it.
    func addDocument(_ path: DocumentPath, bytes: some PieceReadable) throws {
        try StoreDocuments.Staged.spool(tree).write(bytes, at: path)
        expected.documents[TextDigest(path.path)] = try SHA1.hash(pieces: bytes)
    }

    /// The last step: settings, attachments and documents; with `--store`, what is left to count.
    /// - Returns: the archive's document tree as restored (for the documents' checks).
    func finish() throws -> DocumentTree {
        try end()
        let documents = DocumentTree(spool: tree)
        try readBack(RoundTripContent(store: StoreContent(database: database, schema: "main", documentTree: documents, limits: limits), extensionTable: nil))
        try comparison?.compareSettingsAndAttachments()
        try database.execute("COMMIT")
        return documents
    }

    /// Compares (with `--store`), exports and reads back the batch, then empties its table.
    private func flush() throws {
        guard let section, !batch.isEmpty || !expected.extensionRows.isEmpty else { return }
        try comparison?.compareBatch(of: section.name)
        if failure == nil {
            switch section {
            case .table(let table): try compareRows(of: table)
            case .extensionTable(let table):
                try readBack(RoundTripContent(store: StoreContent(database: database, schema: "main", documentTree: nil), extensionTable: table))
            }
        }
        try database.execute("DELETE FROM \(StoreSchema.quoted(section.name))")
        batch.removeAll(keepingCapacity: true)
        batchBytes = 0
        expected.extensionRows.removeAll(keepingCapacity: true)
    }

    /// The batch of `table` read back with the exporter's query, in order, each column
    /// compared with the row as read (`SQLiteStatement.column(_:as:holds:)`, the exporter's
    /// reading without building strings). The export writes what it reads here; `RowTextCheck`
    /// made sure that the text of these values reads back as they are.
    private func compareRows(of table: ArchiveTable) throws {
        let select = try database.cached(StoreSchema.selectAll(table))
        defer { select.reset() }
        let types = table.fields.map(\.type)
        var position = 0, changed = 0
        while try select.step() {
            if position >= batch.count {
                changed += 1
            } else {
                let row = batch[position]
                for (i, type) in types.enumerated() where !select.column(Int32(i), as: type, holds: row[i]) {
                    changed += 1
                    break
                }
            }
            position += 1
        }
        changed += max(0, batch.count - position)
        if changed > 0 { differences[table.key, default: 0] += changed }
    }

    private func readBack(_ content: RoundTripContent) throws {
        guard failure == nil else { return }
        var comparer = RoundTripComparer(expected: expected, extensionTable: content.extensionTable)
        do {
            // A file, not memory, since attachments can be large; with no name on disk.
            let file = try PrivateFiles.unnamedFile("verify's round-trip copy")
            try ArchiveWriter.write(content, options: ArchiveWriterOptions(appVersion: "verify", exportedAt: 0, limits: limits), to: FileSink(file))
            try ArchiveReader(.openFile(file), limits: limits).read(into: &comparer)
        } catch let error as ArchiveError where error.kind == .io {
            // The copy is verify's own scratch file: failing to read it is the machine's doing.
            throw VerifyError.couldNotFinish(error)
        } catch where MachineFailure.caused(error) {
            throw error
        } catch {
            failure = "round trip: the restored \(content.extensionTable?.rawValue ?? "settings, attachments and documents") could not be exported and read back: \(error)"
            return
        }
        comparer.finish()
        differences.merge(comparer.differences, uniquingKeysWith: +)
    }
}

