/// What an archive is written from: a store, or generated data. Each method streams.
public protocol ArchiveContent {
    /// The number of rows `forEachRow` will deliver for `table`.
    func rowCount(of table: ArchiveTable) throws -> Int
    func forEachRow(of table: ArchiveTable, _ body: (ArchiveRow) throws -> Void) throws
    /// Settings in key order (UTF-8 bytes).
    func forEachSetting(_ body: (_ key: String, _ value: String) throws -> Void) throws
    /// Attachments in name order (UTF-8 bytes), each read in pieces as it is written: of any size.
    func forEachAttachment(_ body: (_ name: String, _ contents: any PieceReadable) throws -> Void) throws
    /// True when the archive carries the document tree (then all three keys are written).
    var hasDocuments: Bool { get }
    /// Documents (`stubs` false) or stubs, each with its original bytes when those are not its
    /// canonical encoding.
    func forEachDocument(stubs: Bool, _ body: (_ path: DocumentPath, _ document: JSONNode, _ originalBytes: [UInt8]?) throws -> Void) throws
    /// Files of the tree that are not JSON objects, read in pieces like attachments.
    func forEachDocumentFile(_ body: (_ path: DocumentPath, _ contents: any PieceReadable) throws -> Void) throws
    /// Rows of an extension table (written only when there are some).
    func extensionRowCount(_ table: ExtensionTable) throws -> Int
    func forEachExtensionRow(_ table: ExtensionTable, _ body: (_ row: JSONNode) throws -> Void) throws
}

extension ArchiveContent {
    public var hasDocuments: Bool { false }
    public func forEachDocument(stubs: Bool, _ body: (DocumentPath, JSONNode, [UInt8]?) throws -> Void) throws {}
    public func forEachDocumentFile(_ body: (DocumentPath, any PieceReadable) throws -> Void) throws {}
    public func extensionRowCount(_ table: ExtensionTable) throws -> Int { 0 }
    public func forEachExtensionRow(_ table: ExtensionTable, _ body: (JSONNode) throws -> Void) throws {}
}
