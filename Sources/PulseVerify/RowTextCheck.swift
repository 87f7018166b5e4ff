import PulseArchive
import PulseStore

/// The codec's half of `verify`'s round trip, on the reader's thread: every row as an export
/// writes it must be the file's text byte for byte (so it reads back as the file did), or else
/// read back as the same row. The rows then go on, without their text, to the thread that
/// restores them into the temporary store; there each must come back identical, so what the
/// export writes for it is what was checked here.
struct RowTextCheck: ArchiveVisitor {
    let next: BackgroundVisitor<VerifyingVisitor>
    private var codec: RowTextCodec?
    /// Rows whose written text does not read back as the row, per table.
    private(set) var differences: [String: Int] = [:]
    /// A row the writer refused (a required field without a value).
    private(set) var failure: String?

    private let limits: ArchiveLimits

    init(next: BackgroundVisitor<VerifyingVisitor>, limits: ArchiveLimits) {
        self.next = next
        self.limits = limits
    }

    mutating func beginTable(_ table: ArchiveTable) throws {
        codec = RowTextCodec(table: table, limits: limits)
        try next.beginTable(table)
    }

    mutating func visit(row: ArchiveRow, text: ArraySlice<UInt8>, at index: Int, of table: ArchiveTable) throws {
        check(row, text: text, at: index, of: table)
        try next.visit(row: row, at: index, of: table)
    }

    /// A row without its text (the Android dialect): written and read back.
    mutating func visit(row: ArchiveRow, at index: Int, of table: ArchiveTable) throws {
        check(row, text: nil, at: index, of: table)
        try next.visit(row: row, at: index, of: table)
    }

    private mutating func check(_ row: ArchiveRow, text: ArraySlice<UInt8>?, at index: Int, of table: ArchiveTable) {
        guard failure == nil, let codec else { return }
        do {
            if let text, try codec.writes(row, as: text, index: index) { return }
            if try codec.writtenAndReadBack(row, index: index) != row { differences[table.key, default: 0] += 1 }
        } catch {
            failure = "round trip: \(table.key)[\(index)] could not be exported and read back: \(error)"
        }
    }

    mutating func endTable(_ table: ArchiveTable, rowCount: Int) throws {
        codec = nil
        try next.endTable(table, rowCount: rowCount)
    }

    mutating func visitSetting(key: String, value: String) throws { try next.visitSetting(key: key, value: value) }
    mutating func visitAttachment(name: String, contents: ArchiveBytes) throws { try next.visitAttachment(name: name, contents: contents) }
    mutating func visitDocument(_ path: DocumentPath, document: JSONNode, originalBytes: [UInt8]?) throws {
        try next.visitDocument(path, document: document, originalBytes: originalBytes)
    }
    mutating func visitDocumentFile(_ path: DocumentPath, contents: ArchiveBytes) throws { try next.visitDocumentFile(path, contents: contents) }
    mutating func visitExtensionRow(_ table: ExtensionTable, row: JSONNode, at index: Int) throws {
        try next.visitExtensionRow(table, row: row, at: index)
    }
}
