import PulseArchive

/// One file of the folder with its columns and the rows written so far: a table, the
/// settings, a manifest of attachments.
final class SectionFile {
    let key: String
    let columns: [TableColumn]
    let output: OutputFile
    var rows = 0

    /// Creates the file; a CSV file starts with its header.
    init(key: String, columns: [TableColumn], format: TablesFormat, directory: String) throws {
        self.key = key
        self.columns = columns
        output = try OutputFile(directory: directory, name: "\(key).\(format.fileExtension)")
        if format == .csv {
            try output.write { CSVText.appendRecord(columns.map(\.name), to: &$0) }
        }
    }

    /// Writes one row with `body` (which appends its bytes, line end included).
    func writeRow(_ body: (inout ByteBuffer) throws -> Void) throws {
        try output.write(body)
        rows += 1
    }

    /// What `tables.json` says of it once it is closed.
    func close(directory: String? = nil) throws -> TablesManifest.Entry {
        try output.close()
        return TablesManifest.Entry(key: key, file: output.name, rows: rows, columns: columns, directory: directory)
    }
}
