/// What an archive is written from: a store, or generated data. Each method streams.
public protocol ArchiveContent {
    /// The number of rows `forEachRow` will deliver for `table`.
    func rowCount(of table: ArchiveTable) throws -> Int
    func forEachRow(of table: ArchiveTable, _ body: (ArchiveRow) throws -> Void) throws
    /// The same rows where they lie (a database's current row), for the writer to encode each
    /// field from its column: no `FieldValue` or `String` is built per value. Returns false,
    /// having called nothing, when the content keeps no such rows; the writer then asks
    /// `forEachRow`.
    func forEachStoredRow(of table: ArchiveTable, _ body: (any StoredRow) throws -> Void) throws -> Bool
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
    public func forEachStoredRow(of table: ArchiveTable, _ body: (any StoredRow) throws -> Void) throws -> Bool { false }
    public var hasDocuments: Bool { false }
    public func forEachDocument(stubs: Bool, _ body: (DocumentPath, JSONNode, [UInt8]?) throws -> Void) throws {}
    public func forEachDocumentFile(_ body: (DocumentPath, any PieceReadable) throws -> Void) throws {}
    public func extensionRowCount(_ table: ExtensionTable) throws -> Int { 0 }
    public func forEachExtensionRow(_ table: ExtensionTable, _ body: (JSONNode) throws -> Void) throws {}
}

/// A row read in place, field by field: what kind of value each field holds, then the value.
/// A field is read only as its kind says (`StoredField.read` checks it against the field's
/// type first). Valid only inside the call that hands it over.
public protocol StoredRow {
    func kind(field: Int) -> StoredKind
    func integer(field: Int) -> Int64
    func real(field: Int) -> Double
    /// The text's bytes as stored (maybe not valid UTF-8), valid until the row moves on.
    func text(field: Int) -> UnsafeBufferPointer<UInt8>
}

/// How a stored value is kept (SQLite's storage classes): a store written by this tool keeps
/// integers for `.int`, `.date` (milliseconds since 1970) and `.bool` (0 or 1), reals (or
/// integers a double holds exactly) for `.double`, and text for `.string` and `.uuid`.
public enum StoredKind: Sendable, Equatable {
    case null, integer, real, text, blob
}
