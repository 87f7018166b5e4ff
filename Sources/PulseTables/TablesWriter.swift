import PulseArchive
import PulseDigest
import PulseSystem

/// Writes an archive's content as a folder of tables (docs/analysis.md): one CSV or NDJSON
/// file per table, the settings, the attachments with their manifest, the documents, and
/// `tables.json`. Rows are written as they come, so memory stays flat whatever the archive
/// holds; the folder is built under a private name beside its target and renamed into place
/// by `commit` (`AtomicDirectory`): until then, and after any failure, there is no folder.
///
/// Fed by `TablesVisitor` (an archive read in one pass) or `write(_:)` (a store's snapshot).
/// An archive's rows come table by table, so one table file is open at a time; the sections
/// that come in pieces (settings, attachments, documents, extension rows) stay open until the end.
public final class TablesWriter {
    /// A run's outcome: the folder and the rows written per file's key.
    public struct Result: Sendable {
        public let path: String
        public let format: TablesFormat
        public let rows: [String: Int]
    }

    public static let settingsKey = "settings"
    public static let attachmentsKey = "attachments"
    public static let documentsKey = "documents"
    public static let documentStubsKey = "documentStubs"
    public static let documentFilesKey = "documentFiles"

    /// Every name `--table` takes, in the order of `tables.json`: the archive's tables, the
    /// extension tables, the documents, the settings and the attachments.
    public static let sectionKeys: [String] = ArchiveTable.all.map(\.key) + ExtensionTable.allCases.map(\.rawValue)
        + [documentsKey, documentStubsKey, documentFilesKey, settingsKey, attachmentsKey]

    public let format: TablesFormat
    private let selected: Set<String>
    private let limits: ArchiveLimits
    private let folder: AtomicDirectory
    private var current: (table: ArchiveTable, file: SectionFile, encoding: RowEncoding)?
    private var done: [String: TablesManifest.Entry] = [:]
    private var open: [String: SectionFile] = [:]
    private var spools: [ExtensionTable: ExtensionSpool] = [:]
    /// Rows written so far, all files together: for a progress display.
    public private(set) var rowsWritten = 0

    /// - Parameter tables: the keys to write (`sectionKeys`); nil for all.
    /// - Throws: `SystemError(.alreadyExists)` when `directory` is a link, a file or a
    ///   directory that is not empty; `ArchiveError(.invalidValue)` for a name not in `sectionKeys`.
    public init(directory: String, format: TablesFormat, tables: Set<String>? = nil, limits: ArchiveLimits = .standard) throws {
        if let unknown = tables?.subtracting(Self.sectionKeys).sorted().first {
            throw ArchiveError(.invalidValue, "there is no table \(unknown.debugDescription); the tables are \(Self.sectionKeys.joined(separator: ", "))")
        }
        self.format = format
        selected = tables ?? Set(Self.sectionKeys)
        self.limits = limits
        folder = try AtomicDirectory(targetPath: directory)
        for key in [Self.attachmentsKey, Self.documentFilesKey] where selected.contains(key) {
            try PrivateFiles.createDirectory("\(folder.stagingPath)/\(key)")
        }
    }

    deinit {
        // The open files go before the staging folder (`folder` goes with this object): a FUSE
        // file system (exfat-fuse, fusefat) keeps a removed open file under a hidden name, and
        // a failed run left the staging folder on the stick, not empty.
        current = nil
        open.removeAll()
        spools.removeAll()
    }

    /// Whether the section `key` is written.
    func wants(_ key: String) -> Bool { selected.contains(key) }

    // MARK: - The archive's tables

    public func beginTable(_ table: ArchiveTable) throws {
        try endTable()
        guard selected.contains(table.key) else { return }
        guard done[table.key] == nil else {
            throw ArchiveError(.invalidValue, "the table \(table.key) came twice", table: table.key)
        }
        let file = try SectionFile(key: table.key, columns: TableColumn.of(table), format: format, directory: folder.stagingPath)
        current = (table, file, RowEncoding(table: table, limits: limits))
    }

    /// Writes a row of the table begun last (nothing when that table is not selected).
    public func write(row: ArchiveRow, index: Int) throws {
        guard let (table, file, encoding) = current else { return }
        try file.writeRow { out in
            switch format {
            case .ndjson:
                try encoding.append(row, index: index, to: &out)
                out.append(0x0A)
            case .csv:
                try Self.appendCSV(row, of: table, index: index, to: &out)
            }
        }
        rowsWritten += 1
    }

    public func endTable() throws {
        guard let (table, file, _) = current else { return }
        current = nil
        done[table.key] = try file.close()
    }

    /// A row as a CSV record: every field in the table's order, each as the writer writes it
    /// (`FieldText`), null as an empty field.
    private static func appendCSV(_ row: ArchiveRow, of table: ArchiveTable, index: Int, to out: inout ByteBuffer) throws {
        for (i, value) in row.values.enumerated() {
            if i > 0 { out.append(CSVText.comma) }
            switch value {
            case .null:
                continue
            case .string(var text):
                text.withUTF8 { CSVText.appendField($0, to: &out) }
            default:
                do {
                    try FieldText.append(value, to: &out)
                } catch let error as ArchiveError {
                    throw ArchiveError(error.kind, "\(table.key)[\(index)].\(table.fields[i].name): cannot be written: \(error.message)", table: table.key)
                }
            }
        }
        out.append(CSVText.recordEnd)
    }

    // MARK: - Settings, attachments, documents, extension tables

    /// The open file of a section that comes in pieces, created on its first row.
    private func section(_ key: String, columns: [TableColumn]) throws -> SectionFile? {
        guard selected.contains(key) else { return nil }
        if let file = open[key] { return file }
        let file = try SectionFile(key: key, columns: columns, format: format, directory: folder.stagingPath)
        open[key] = file
        return file
    }

    private static let settingsColumns = [TableColumn("key", .text), TableColumn("value", .json)]
    private static let attachmentColumns = [TableColumn("name", .text), TableColumn("size", .integer, unit: "bytes"), TableColumn("sha256", .text)]
    private static let documentColumns = [TableColumn("path", .text), TableColumn("kind", .text), TableColumn("id", .text), TableColumn("document", .json)]
    private static let documentFileColumns = [TableColumn("path", .text), TableColumn("file", .text), TableColumn("size", .integer, unit: "bytes"),
                                              TableColumn("sha256", .text)]

    /// A settings key and its blob, the JSON text the app stores, verbatim.
    public func writeSetting(key: String, value: String) throws {
        guard let file = try section(Self.settingsKey, columns: Self.settingsColumns) else { return }
        try file.writeRow { out in
            switch format {
            case .csv:
                CSVText.appendRecord([key, value], to: &out)
            case .ndjson:
                out.append("{\"key\":\(JSONText.quoted(key)),\"value\":\(JSONText.quoted(value))}\n")
            }
        }
        rowsWritten += 1
    }

    /// An attachment: its bytes, in pieces, to `attachments/<name>` (the name as the archive
    /// has it: `AttachmentName` allows only one plain component, never `..`, `/`, a leading
    /// `.`, a backslash or NUL), and a line of the manifest.
    public func writeAttachment(name: String, contents: some PieceReadable) throws {
        guard let file = try section(Self.attachmentsKey, columns: Self.attachmentColumns) else { return }
        try AttachmentName.validate(name)
        let digest = try copy(contents, to: "\(Self.attachmentsKey)", name: name)
        try file.writeRow { out in
            switch format {
            case .csv:
                CSVText.appendRecord([name, String(contents.count), digest], to: &out)
            case .ndjson:
                out.append("{\"name\":\(JSONText.quoted(name)),\"sha256\":\"\(digest)\",\"size\":\(contents.count)}\n")
            }
        }
        rowsWritten += 1
    }

    /// Writes `contents` to a new file `name` in the folder's `subdirectory`; returns its SHA-256 in hex.
    private func copy(_ contents: some PieceReadable, to subdirectory: String, name: String) throws -> String {
        let output: OutputFile
        do {
            output = try OutputFile(directory: "\(folder.stagingPath)/\(subdirectory)", name: name)
        } catch let error as SystemError {
            // A name the archive allows can still be one this file system refuses (too long,
            // a character it does not take): say which entry it was.
            throw SystemError(error.kind, "the \(subdirectory) entry '\(name)' cannot be a file here: \(error.message)")
        }
        let hasher = SHA256()
        try contents.forEachPiece { piece in
            hasher.update(piece)
            try output.writeThrough(piece)
        }
        try output.close()
        var hex: [UInt8] = []
        for byte in hasher.finish() { HexText.append(byte, to: &hex) }
        // Lower case, as `sha256sum` prints it.
        return String(decoding: hex, as: UTF8.self).lowercased()
    }

    /// A document or stub (by its path) as a row: its path, kind, id, and the JSON object.
    public func writeDocument(_ path: DocumentPath, document: JSONNode) throws {
        let key = path.isStub ? Self.documentStubsKey : Self.documentsKey
        guard let file = try section(key, columns: Self.documentColumns) else { return }
        try file.writeRow { out in
            var json = ByteBuffer()
            document.appendJSON(to: &json)
            switch format {
            case .csv:
                for (i, text) in [path.path, path.kind.rawValue, path.id].enumerated() {
                    if i > 0 { out.append(CSVText.comma) }
                    CSVText.appendField(text, to: &out)
                }
                out.append(CSVText.comma)
                json.withBytes { CSVText.appendField($0, to: &out) }
                out.append(CSVText.recordEnd)
            case .ndjson:
                out.append("{\"document\":")
                json.withBytes { out.append($0) }
                out.append(",\"path\":\(JSONText.quoted(path.path))}\n")
            }
        }
        rowsWritten += 1
    }

    /// A file of the document tree that is not JSON: its bytes under `documentFiles/`, named
    /// by its path with `/` as `_` (a document path has no `_` of its own, so names stay
    /// distinct), and a line of the manifest.
    public func writeDocumentFile(_ path: DocumentPath, contents: some PieceReadable) throws {
        guard let file = try section(Self.documentFilesKey, columns: Self.documentFileColumns) else { return }
        let name = path.path.replacingOccurrences(of: "/", with: "_")
        let digest = try copy(contents, to: Self.documentFilesKey, name: name)
        try file.writeRow { out in
            switch format {
            case .csv:
                CSVText.appendRecord([path.path, name, String(contents.count), digest], to: &out)
            case .ndjson:
                out.append("{\"file\":\(JSONText.quoted(name)),\"path\":\(JSONText.quoted(path.path)),\"sha256\":\"\(digest)\",\"size\":\(contents.count)}\n")
            }
        }
        rowsWritten += 1
    }

    /// A row of an extension table (the Android port's meals and food products): NDJSON at
    /// once; CSV once every row is seen, since the columns are the keys the rows have
    /// (`ExtensionSpool`).
    public func writeExtensionRow(_ table: ExtensionTable, row: JSONNode) throws {
        guard selected.contains(table.rawValue) else { return }
        switch format {
        case .ndjson:
            guard let file = try section(table.rawValue, columns: []) else { return }
            try file.writeRow { out in
                row.appendJSON(to: &out)
                out.append(0x0A)
            }
        case .csv:
            if spools[table] == nil { spools[table] = try ExtensionSpool() }
            try spools[table]!.add(row)
        }
        rowsWritten += 1
    }

    // MARK: - The end

    /// Closes every file, writes the header-only files of the tables that had no rows and
    /// `tables.json`, and renames the folder into place.
    /// - Throws: `SystemError(.alreadyExists)` when the target gained an entry meanwhile.
    public func commit() throws -> Result {
        try endTable()
        for table in ArchiveTable.all where selected.contains(table.key) && done[table.key] == nil {
            done[table.key] = try SectionFile(key: table.key, columns: TableColumn.of(table), format: format, directory: folder.stagingPath).close()
        }
        for (table, spool) in spools {
            let file = try SectionFile(key: table.rawValue, columns: spool.columns, format: format, directory: folder.stagingPath)
            try spool.writeRows(to: file)
            done[table.rawValue] = try file.close()
        }
        spools = [:]
        let always = [(Self.documentsKey, Self.documentColumns), (Self.documentStubsKey, Self.documentColumns),
                      (Self.documentFilesKey, Self.documentFileColumns), (Self.settingsKey, Self.settingsColumns),
                      (Self.attachmentsKey, Self.attachmentColumns)]
        for (key, columns) in always {
            _ = try section(key, columns: columns)
        }
        for (key, file) in open {
            let directory = key == Self.attachmentsKey || key == Self.documentFilesKey ? key : nil
            done[key] = try file.close(directory: directory)
        }
        open = [:]
        let entries = Self.sectionKeys.compactMap { done[$0] }
        let manifest = try OutputFile(directory: folder.stagingPath, name: "tables.json")
        try manifest.write { $0.append(TablesManifest.text(format: format, entries: entries)) }
        try manifest.close()
        // The files' names in the two subfolders are on disk before the folder takes its name.
        for key in [Self.attachmentsKey, Self.documentFilesKey] where selected.contains(key) {
            try PrivateFiles.sync("\(folder.stagingPath)/\(key)")
        }
        try folder.commit()
        return Result(path: folder.targetPath, format: format, rows: done.mapValues(\.rows))
    }
}
