import PulseArchive
import PulseDocuments
import PulseStore

/// The temporary store as the exporter sees it on the long way: the rows of one extension
/// table, or (the last step, `extensionTable` nil) the settings, attachments and documents.
/// Rows of archive tables are compared in place (`RollingRoundTrip.compareRows`), never here.
struct RoundTripContent: ArchiveContent {
    let store: StoreContent
    let extensionTable: ExtensionTable?

    var hasDocuments: Bool { extensionTable == nil && store.hasDocuments }

    func rowCount(of table: ArchiveTable) throws -> Int { 0 }

    func forEachRow(of table: ArchiveTable, _ body: (ArchiveRow) throws -> Void) throws {}

    func extensionRowCount(_ table: ExtensionTable) throws -> Int {
        extensionTable == table ? try store.extensionRowCount(table) : 0
    }

    func forEachExtensionRow(_ table: ExtensionTable, _ body: (JSONNode) throws -> Void) throws {
        if extensionTable == table { try store.forEachExtensionRow(table, body) }
    }

    func forEachSetting(_ body: (String, String) throws -> Void) throws {
        if extensionTable == nil { try store.forEachSetting(body) }
    }

    func forEachAttachment(_ body: (String, any PieceReadable) throws -> Void) throws {
        if extensionTable == nil { try store.forEachAttachment(body) }
    }

    func forEachDocument(stubs: Bool, _ body: (DocumentPath, JSONNode, [UInt8]?) throws -> Void) throws {
        try store.forEachDocument(stubs: stubs, body)
    }

    func forEachDocumentFile(_ body: (DocumentPath, any PieceReadable) throws -> Void) throws {
        try store.forEachDocumentFile(body)
    }
}
