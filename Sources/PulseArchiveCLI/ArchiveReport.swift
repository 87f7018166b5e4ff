import PulseArchive
import PulseStore

/// The text and JSON forms of what a read found.
enum ArchiveReport {
    static func inspect(_ summary: ArchiveSummary) -> JSONReport {
        .object([
            ("formatVersion", .int(summary.formatVersion)),
            ("dialect", .string(summary.dialect.rawValue)),
            ("compressed", .bool(summary.isCompressed)),
            ("encrypted", .bool(summary.isEncrypted)),
            ("appVersion", .string(summary.appVersion)),
            ("exportedAt", .string((try? ArchiveDate.format(summary.exportedAt)) ?? "")),
            ("tables", .counts(summary.tableCounts)),
            ("declaredCounts", .object(summary.declaredCounts.sorted { $0.key < $1.key }.map { ($0.key.text, .int($0.value)) })),
            ("bytes", .object([("compressed", .int(summary.fileBytes)), ("uncompressed", .int(summary.jsonBytes))])),
            ("settings", .int(summary.settingsCount)),
            ("attachments", .int(summary.attachmentsCount)),
            ("extensionFields", .counts(summary.extensionFields)),
            ("warnings", .array(summary.warnings.map { .string($0.message) })),
        ])
    }

    static func inspectText(_ summary: ArchiveSummary, file: String) -> String {
        let container = (summary.isCompressed ? "gzip" : "plain JSON") + (summary.isEncrypted ? ", age-encrypted" : "")
        var text = "\(file): PulseLoop archive, format \(summary.formatVersion) (\(summary.dialect.rawValue) dialect, \(container))\n"
        text += "  app version   \(ShownText.escapingControls(summary.appVersion))\n"
        text += "  exported at   \((try? ArchiveDate.format(summary.exportedAt)) ?? "?")\n"
        text += "  size          \(Formatting.bytes(summary.fileBytes)) on disk, \(Formatting.bytes(summary.jsonBytes)) of JSON\n"
        text += "  settings      \(summary.settingsCount) key\(summary.settingsCount == 1 ? "" : "s")\n"
        text += "  attachments   \(summary.attachmentsCount) file\(summary.attachmentsCount == 1 ? "" : "s")\n\n"
        let rows = ArchiveTable.all.compactMap { table -> [String]? in
            guard let found = summary.rowsFound[table.key] else { return nil }
            let declared = summary.declaredCount(of: table.key).map { ProgressLine.grouped(Int($0)) } ?? "-"
            return [table.key, ProgressLine.grouped(found), declared]
        }
        let extensions = ExtensionTable.allCases.compactMap { table -> [String]? in
            guard let found = summary.rowsFound[table.rawValue] else { return nil }
            return [table.rawValue, ProgressLine.grouped(found), summary.declaredCount(of: table.rawValue).map { ProgressLine.grouped(Int($0)) } ?? "-"]
        }
        let documents = summary.documentTables.sorted { $0.key < $1.key }.map { [$0.key, ProgressLine.grouped($0.value), "-"] }
        text += Formatting.columns(["table", "rows", "declared"], rows + extensions + documents, numeric: [1, 2])
        if !summary.extensionFields.isEmpty {
            text += "\n\n  extension fields kept (the app does not archive them):"
            for (field, count) in summary.extensionFields.sorted(by: { $0.key < $1.key }) { text += "\n    \(ShownText.escapingControls(field)): \(count) row\(count == 1 ? "" : "s")" }
        }
        if !summary.hasDocuments { text += "\n  (no workout documents in this archive)" }
        return text
    }
}
