import PulseArchive

/// `tables.json`: for each file of the folder its name, row count and columns (type, unit),
/// so a loader can read every column with its type (docs/analysis.md).
enum TablesManifest {
    struct Entry {
        let key: String
        let file: String
        let rows: Int
        let columns: [TableColumn]
        /// The folder holding the bytes a manifest lists (`attachments`), or nil.
        let directory: String?
    }

    /// The manifest's JSON text, entries in the order given, two-space indented, ending in a newline.
    static func text(format: TablesFormat, entries: [Entry]) -> [UInt8] {
        var out = "{\n  \"format\": \(JSONText.quoted(format.rawValue)),\n"
        out += "  \"dates\": \"ISO 8601 UTC with milliseconds\",\n"
        out += "  \"tables\": {"
        for (i, entry) in entries.enumerated() {
            out += i == 0 ? "\n" : ",\n"
            out += "    \(JSONText.quoted(entry.key)): {\n"
            out += "      \"file\": \(JSONText.quoted(entry.file)),\n"
            if let directory = entry.directory { out += "      \"directory\": \(JSONText.quoted(directory)),\n" }
            out += "      \"rows\": \(entry.rows),\n"
            out += "      \"columns\": ["
            for (j, column) in entry.columns.enumerated() {
                out += j == 0 ? "\n" : ",\n"
                out += "        {\"name\": \(JSONText.quoted(column.name)), \"type\": \(JSONText.quoted(column.type.rawValue))"
                if let unit = column.unit { out += ", \"unit\": \(JSONText.quoted(unit))" }
                if let unitColumn = column.unitColumn { out += ", \"unitColumn\": \(JSONText.quoted(unitColumn))" }
                out += "}"
            }
            out += entry.columns.isEmpty ? "]\n" : "\n      ]\n"
            out += "    }"
        }
        out += "\n  }\n}\n"
        return Array(out.utf8)
    }
}
