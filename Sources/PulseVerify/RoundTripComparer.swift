import PulseArchive
import PulseDigest
import PulseDocuments

/// Reads a step of the long way back and compares it with what the archive gave: extension
/// rows in order, settings and attachments by key, documents by path.
struct RoundTripComparer: ArchiveVisitor {
    /// What a step must bring back. Attachments and documents by their SHA-1; keys, paths and
    /// settings values by their digests (`TextDigest`): byte for byte, without holding them.
    struct Expected {
        var extensionRows: [JSONNode] = []
        var settings: [TextDigest: TextDigest] = [:]
        var attachments: [TextDigest: [UInt8]] = [:]
        var documents: [TextDigest: [UInt8]] = [:]
    }

    let expected: Expected
    /// The step's rows; nil for the last step.
    let extensionTable: ExtensionTable?
    /// Per table, `settings`, `attachments`, `documents`: values that did not come back.
    private(set) var differences: [String: Int] = [:]
    private var rowsSeen = 0, settingsSeen = 0, attachmentsSeen = 0, documentsSeen = 0

    init(expected: Expected, extensionTable: ExtensionTable?) {
        self.expected = expected
        self.extensionTable = extensionTable
    }

    /// No archive row travels the long way: one that does is a difference.
    mutating func visit(row: ArchiveRow, at index: Int, of table: ArchiveTable) throws {
        differences[table.key, default: 0] += 1
    }

    mutating func visitExtensionRow(_ table: ExtensionTable, row: JSONNode, at index: Int) throws {
        rowsSeen += 1
        if extensionTable != table || index >= expected.extensionRows.count || expected.extensionRows[index] != row {
            differences[table.rawValue, default: 0] += 1
        }
    }

    /// A value that comes back changed counts once, as does one that does not come back.
    mutating func visitSetting(key: String, value: String) throws {
        let expectedValue = expected.settings[TextDigest(key)]
        if expectedValue != nil { settingsSeen += 1 }
        if expectedValue != TextDigest(value) { differences["settings", default: 0] += 1 }
    }

    mutating func visitAttachment(name: String, contents: ArchiveBytes) throws {
        let expectedHash = expected.attachments[TextDigest(name)]
        if expectedHash != nil { attachmentsSeen += 1 }
        if try expectedHash != SHA1.hash(pieces: contents) { differences["attachments", default: 0] += 1 }
    }

    mutating func visitDocument(_ path: DocumentPath, document: JSONNode, originalBytes: [UInt8]?) throws {
        try compareDocument(path, originalBytes ?? DocumentCoder.encode(document))
    }

    mutating func visitDocumentFile(_ path: DocumentPath, contents: ArchiveBytes) throws {
        try compareDocument(path, contents)
    }

    private mutating func compareDocument(_ path: DocumentPath, _ bytes: some PieceReadable) throws {
        let expectedHash = expected.documents[TextDigest(path.path)]
        if expectedHash != nil { documentsSeen += 1 }
        if try expectedHash != SHA1.hash(pieces: bytes) { differences["documents", default: 0] += 1 }
    }

    /// Counts what did not come back at all.
    mutating func finish() {
        if let extensionTable {
            let missing = expected.extensionRows.count - rowsSeen
            if missing > 0 { differences[extensionTable.rawValue, default: 0] += missing }
            return
        }
        for (name, count, seen) in [("settings", expected.settings.count, settingsSeen), ("attachments", expected.attachments.count, attachmentsSeen),
                                    ("documents", expected.documents.count, documentsSeen)] where seen < count {
            differences[name, default: 0] += count - seen
        }
    }
}
