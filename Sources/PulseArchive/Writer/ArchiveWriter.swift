import Foundation
import PulseSystem

/// Writes an archive in the app's dialect, one row at a time.
///
/// `formatVersion` comes first, so a reader refuses a newer format before it touches any data,
/// then `appVersion`; the tables and the rest follow sorted by key, and the two fields that
/// change every night, `counts` and `exportedAt`, come last: a deduplicating backup (restic,
/// borg, kopia) of the plain JSON then finds the start of the file unchanged (docs/backups.md).
public enum ArchiveWriter {
    /// Writes `content` to `sink` and finishes the sink.
    /// - Returns: the rows written per table key (extension tables included when written).
    /// - Throws: `ArchiveError` when a row breaks the format (a required field without a
    ///   value) or when the content changed while it was written.
    @discardableResult
    public static func write(_ content: some ArchiveContent, options: ArchiveWriterOptions, to sink: ByteSink,
                             progress: ((_ rowsWritten: Int, _ totalRows: Int) -> Void)? = nil) throws -> [String: Int] {
        guard (ArchiveFormat.oldestVersion...ArchiveFormat.newestVersion).contains(options.formatVersion) else {
            throw ArchiveError(.unsupportedFeature, "cannot write format \(options.formatVersion): this tool writes formats 1 and 2")
        }
        let out = JSONOutput(sink: sink)
        // What the reader accepts with these limits (by default, its own defaults): the writer
        // refuses anything else, so every archive it writes can be read back (docs/reliability.md).
        let limits = options.limits
        let tables = options.tables
        var counts: [String: Int] = [:]
        for table in tables { counts[table.key] = try content.rowCount(of: table) }
        var extensions: [ExtensionTable] = []
        for table in ExtensionTable.allCases {
            let count = try content.extensionRowCount(table)
            if count > 0 {
                counts[table.rawValue] = count
                extensions.append(table)
            }
        }
        let totalRows = counts.values.reduce(0, +)
        var rowsBefore = 0

        var sections: [(String, Section)] = tables.map { ($0.key, .table($0)) }
        sections += [("settings", .settings), ("attachments", .attachments)]
        if content.hasDocuments {
            sections += [("documents", .documents(stubs: false)), ("documentStubs", .documents(stubs: true)), ("documentFiles", .documentFiles)]
        }
        sections += extensions.map { ($0.rawValue, .extensionTable($0)) }
        let leading: [(String, Section)] = [("formatVersion", .formatVersion), ("appVersion", .appVersion)]
        let volatile: [(String, Section)] = [("counts", .counts), ("exportedAt", .exportedAt)]
        if options.envelopeKeysFirst {
            sections = leading + sections.sorted { utf8Precedes($0.0, $1.0) } + volatile
        } else {
            sections = (leading + sections + volatile).sorted { utf8Precedes($0.0, $1.0) }
        }

        out.byte(JSONByte.openBrace)
        for (index, (key, section)) in sections.enumerated() {
            if index > 0 { out.byte(JSONByte.comma) }
            out.key(Array(key.utf8))
            switch section {
            case .appVersion:
                out.string(options.appVersion)
            case .counts:
                try writeElements(to: out, open: JSONByte.openBrace, close: JSONByte.closeBrace) { element in
                    for key in counts.keys.sorted(by: utf8Precedes) {
                        try element { _ in
                            out.key(Array(key.utf8))
                            out.int(Int64(counts[key]!))
                        }
                    }
                }
            case .exportedAt:
                try out.date(options.exportedAt)
            case .formatVersion:
                out.int(options.formatVersion)
            case .table(let table):
                let written = try writeRows(of: table, from: content, to: out, limits: limits) { written in
                    let done = rowsBefore + written
                    if done & 0x1FFF == 0 { progress?(done, totalRows) }
                }
                rowsBefore += written
                guard written == counts[table.key] else {
                    throw ArchiveError(.io, "\(table.key) changed while it was exported (\(counts[table.key]!) rows counted, \(written) written)")
                }
            case .settings:
                try writeElements(to: out, open: JSONByte.openBrace, close: JSONByte.closeBrace) { element in
                    try content.forEachSetting { key, value in
                        try SettingsBlob.check(key: key, value: value, limits: limits)
                        try element { _ in out.key(Array(key.utf8)); out.string(value) }
                    }
                }
            case .attachments:
                try writeElements(to: out, open: JSONByte.openBracket, close: JSONByte.closeBracket) { element in
                    try content.forEachAttachment { name, contents in
                        // Of any size: the reader streams these values too (no string limit).
                        try AttachmentName.validate(name)
                        try element { _ in
                            out.byte(JSONByte.openBrace)
                            out.key(Array("base64".utf8)); try out.base64(pieces: contents); out.byte(JSONByte.comma)
                            out.key(Array("file".utf8)); out.string(name)
                            out.byte(JSONByte.closeBrace)
                        }
                    }
                }
            case .documents(let stubs):
                try writeElements(to: out, open: JSONByte.openBracket, close: JSONByte.closeBracket) { element in
                    try content.forEachDocument(stubs: stubs) { path, document, original in
                        if let original {
                            try limits.checkBase64Payload(original.count, "documents: \(path.path)")
                            // The reader parses these bytes whole to compare them with the document.
                            try limits.checkWholeValue(original.count, "documents: \(path.path) (its own bytes)")
                        }
                        try element { _ in
                            out.byte(JSONByte.openBrace)
                            if let original {
                                out.key(Array("base64".utf8)); out.base64(original); out.byte(JSONByte.comma)
                            }
                            out.key(Array("document".utf8)); try out.wholeValue(document, limits: limits, "documents: \(path.path)"); out.byte(JSONByte.comma)
                            out.key(Array("path".utf8)); out.string(path.path)
                            out.byte(JSONByte.closeBrace)
                        }
                    }
                }
            case .extensionTable(let table):
                let written = try writeElements(to: out, open: JSONByte.openBracket, close: JSONByte.closeBracket) { element in
                    try content.forEachExtensionRow(table) { row in
                        try element { index in
                            if let problem = table.problem(with: row) {
                                throw ArchiveError.unexportable("\(table.rawValue)[\(index)]", problem, table: table.rawValue)
                            }
                            try out.wholeValue(row, limits: limits, "\(table.rawValue)[\(index)]")
                        }
                    }
                }
                guard written == counts[table.rawValue] else {
                    throw ArchiveError(.io, "\(table.rawValue) changed while it was exported")
                }
            case .documentFiles:
                try writeElements(to: out, open: JSONByte.openBracket, close: JSONByte.closeBracket) { element in
                    try content.forEachDocumentFile { path, contents in
                        try element { _ in
                            out.byte(JSONByte.openBrace)
                            out.key(Array("base64".utf8)); try out.base64(pieces: contents); out.byte(JSONByte.comma)
                            out.key(Array("path".utf8)); out.string(path.path)
                            out.byte(JSONByte.closeBrace)
                        }
                    }
                }
            }
        }
        out.byte(JSONByte.closeBrace)
        try out.flush()
        try sink.finish()
        return counts
    }

    private static func writeRows(of table: ArchiveTable, from content: some ArchiveContent, to out: JSONOutput, limits: ArchiveLimits,
                                  progress: (Int) -> Void) throws -> Int {
        let encoding = RowEncoding(table: table, limits: limits)
        var written = 0
        try writeElements(to: out, open: JSONByte.openBracket, close: JSONByte.closeBracket) { element in
            let stored = try content.forEachStoredRow(of: table) { row in
                try element { index in try out.appending { try encoding.append(stored: row, index: index, to: &$0) } }
                written += 1
                progress(written)
            }
            guard !stored else { return }
            try content.forEachRow(of: table) { row in
                try element { index in try out.appending { try encoding.append(row, index: index, to: &$0) } }
                written += 1
                progress(written)
            }
        }
        return written
    }

    /// Writes one section's elements between `open` and `close`: `elements` calls the closure
    /// it is given once per element, with what writes that element (given its index); a comma
    /// goes before each element but the first, and the buffer is flushed when it is full.
    /// - Returns: the number of elements written.
    @discardableResult
    private static func writeElements(to out: JSONOutput, open: UInt8, close: UInt8,
                                      _ elements: (_ element: (_ write: (_ index: Int) throws -> Void) throws -> Void) throws -> Void) throws -> Int {
        out.byte(open)
        var written = 0
        try elements { write in
            if written > 0 { out.byte(JSONByte.comma) }
            try write(written)
            written += 1
            try out.flushIfFull()
        }
        out.byte(close)
        return written
    }
}

private enum Section { case appVersion, counts, exportedAt, formatVersion, table(ArchiveTable), settings, attachments, documents(stubs: Bool), documentFiles, extensionTable(ExtensionTable) }

/// The order of keys in the app's files: by UTF-8 bytes, not by Unicode collation.
func utf8Precedes(_ a: String, _ b: String) -> Bool {
    a.utf8.lexicographicallyPrecedes(b.utf8)
}
