import PulseArchive

/// Hands an archive's content, as the reader streams it, to a `TablesWriter`. The folder is
/// committed only after the read returns (`TablesWriter.commit`): the reader checks the format
/// version and the whole file first, so a refused archive leaves no folder.
public struct TablesVisitor: ArchiveVisitor {
    public let writer: TablesWriter

    public init(writer: TablesWriter) {
        self.writer = writer
    }

    public mutating func beginTable(_ table: ArchiveTable) throws { try writer.beginTable(table) }
    public mutating func visit(row: ArchiveRow, at index: Int, of table: ArchiveTable) throws { try writer.write(row: row, index: index) }
    public mutating func endTable(_ table: ArchiveTable, rowCount: Int) throws { try writer.endTable() }
    public mutating func visitSetting(key: String, value: String) throws { try writer.writeSetting(key: key, value: value) }
    public mutating func visitAttachment(name: String, contents: ArchiveBytes) throws { try writer.writeAttachment(name: name, contents: contents) }
    public mutating func visitDocument(_ path: DocumentPath, document: JSONNode, originalBytes: [UInt8]?) throws {
        try writer.writeDocument(path, document: document)
    }
    public mutating func visitDocumentFile(_ path: DocumentPath, contents: ArchiveBytes) throws { try writer.writeDocumentFile(path, contents: contents) }
    public mutating func visitExtensionRow(_ table: ExtensionTable, row: JSONNode, at index: Int) throws { try writer.writeExtensionRow(table, row: row) }
}

extension TablesWriter {
    /// Writes everything `content` holds (a store's snapshot: what an export of it writes), in
    /// the order an export writes it; tables not selected are not read at all.
    /// - Parameter progress: called every few thousand rows with the rows written.
    public func write(_ content: some ArchiveContent, progress: ((Int) -> Void)? = nil) throws {
        for table in ArchiveTable.all where wants(table.key) {
            try beginTable(table)
            var index = 0
            try content.forEachRow(of: table) { row in
                try write(row: row, index: index)
                index += 1
                if index & 0x1FFF == 0 { progress?(rowsWritten) }
            }
            try endTable()
        }
        if wants(Self.settingsKey) { try content.forEachSetting { try writeSetting(key: $0, value: $1) } }
        if wants(Self.attachmentsKey) { try content.forEachAttachment { try writeAttachment(name: $0, contents: $1) } }
        if content.hasDocuments {
            try content.forEachDocument(stubs: false) { path, document, _ in try writeDocument(path, document: document) }
            try content.forEachDocument(stubs: true) { path, document, _ in try writeDocument(path, document: document) }
            if wants(Self.documentFilesKey) { try content.forEachDocumentFile { try writeDocumentFile($0, contents: $1) } }
        }
        for table in ExtensionTable.allCases where wants(table.rawValue) {
            try content.forEachExtensionRow(table) { try writeExtensionRow(table, row: $0) }
        }
        progress?(rowsWritten)
    }
}
