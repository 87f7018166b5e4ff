/// Receives an archive's content as the reader streams through it, one row at a time.
///
/// The reader has checked each value's type, but not what needs the whole table (unique keys)
/// and not yet the format version, which may come after the tables: a visitor stages rows,
/// it does not apply them, until `read` returns.
public protocol ArchiveVisitor {
    mutating func beginTable(_ table: ArchiveTable) throws
    /// Every visitor implements it (no default): one that forgot would drop every row silently.
    mutating func visit(row: ArchiveRow, at index: Int, of table: ArchiveTable) throws
    /// A row with its JSON text as the file has it, when the read keeps row text
    /// (`ArchiveReader.keepsRowText`); by default the text is dropped.
    mutating func visit(row: ArchiveRow, text: ArraySlice<UInt8>, at index: Int, of table: ArchiveTable) throws
    mutating func endTable(_ table: ArchiveTable, rowCount: Int) throws
    mutating func visitSetting(key: String, value: String) throws
    /// An attachment, of any size: read it in pieces (`forEachPiece`), never whole.
    mutating func visitAttachment(name: String, contents: ArchiveBytes) throws
    /// A document (`documents`) or stub (`documentStubs`) as a JSON object, with the file's
    /// original bytes when they differ from its canonical encoding.
    mutating func visitDocument(_ path: DocumentPath, document: JSONNode, originalBytes: [UInt8]?) throws
    /// A file of the document tree that is not a JSON object (`documentFiles`), byte for byte,
    /// of any size like an attachment.
    mutating func visitDocumentFile(_ path: DocumentPath, contents: ArchiveBytes) throws
    /// A row of an extension table (the Android port's meals and food products), as an object.
    mutating func visitExtensionRow(_ table: ExtensionTable, row: JSONNode, at index: Int) throws
}

extension ArchiveVisitor {
    public mutating func beginTable(_ table: ArchiveTable) throws {}
    public mutating func visit(row: ArchiveRow, text: ArraySlice<UInt8>, at index: Int, of table: ArchiveTable) throws {
        try visit(row: row, at: index, of: table)
    }
    public mutating func endTable(_ table: ArchiveTable, rowCount: Int) throws {}
    public mutating func visitSetting(key: String, value: String) throws {}
    public mutating func visitAttachment(name: String, contents: ArchiveBytes) throws {}
    public mutating func visitDocument(_ path: DocumentPath, document: JSONNode, originalBytes: [UInt8]?) throws {}
    public mutating func visitDocumentFile(_ path: DocumentPath, contents: ArchiveBytes) throws {}
    public mutating func visitExtensionRow(_ table: ExtensionTable, row: JSONNode, at index: Int) throws {}
}
