import Foundation

// The app's tables, the Android dialect's tables, and the extension tables.
extension EnvelopeParser {
    // MARK: - The app's tables

    mutating func readTable<Visitor: ArchiveVisitor>(_ table: ArchiveTable, into visitor: inout Visitor) throws {
        try visitor.beginTable(table)
        var decoder = RowDecoder(table: table)
        decoder.keepsText = keepsRowText
        // The rows read before an error that stops the read, for a report that lists them.
        var rowsBefore = 0
        defer { if summary.rowsFound[table.key] == nil { summary.rowsFound[table.key] = rowsBefore } }
        let count = try readArray(at: table.key) { parser, index in
            if let row = try decoder.readRow(parser.scanner, index: index, scratch: &parser.scratch, problems: parser.problems) {
                if parser.keepsRowText {
                    try parser.problems.recovering { try visitor.visit(row: row, text: decoder.rowText[...], at: index, of: table) }
                } else {
                    try parser.problems.recovering { try visitor.visit(row: row, at: index, of: table) }
                }
            }
            parser.countRow()
            rowsBefore = index + 1
        }
        unknownFields[table.key, default: NameTally()].add(decoder.unknownFields)
        summary.rowsFound[table.key] = count
        try visitor.endTable(table, rowCount: count)
    }

    /// Counts a row for the progress report.
    private mutating func countRow() {
        rowsRead += 1
        if rowsRead & 0x3FFF == 0 { reportRows?(rowsRead) }
    }

    // MARK: - The Android dialect and the extension tables

    /// An Android table: each row read whole, then mapped into the app's row.
    mutating func readAndroidTable<Visitor: ArchiveVisitor>(_ table: ArchiveTable, key: String, into visitor: inout Visitor) throws {
        try visitor.beginTable(table)
        let known = AndroidDialect.knownFields(table)
        let count = try readArray(at: key) { parser, index in
            let location = "\(key)[\(index)]"
            try parser.problems.recovering {
                let object = try parser.readRowObject(at: location, table: table.key)
                for field in object.keys where !known.contains(field) { parser.unknownFields[table.key, default: NameTally()].add(field) }
                var unknownNames: [ByteKey] = []
                let row = try AndroidDialect.mapRow(object, table: table, location: location, dayKey: parser.dayKey) { field, name in
                    unknownNames.append(ByteKey("\(table.key).\(field) \(ShownText.quoted(name))"))
                }
                for name in unknownNames { parser.unknownNames.add(name) }
                for (i, field) in table.fields.enumerated() where field.isExtension && !row[i].isNull {
                    parser.summary.extensionFields["\(table.key).\(field.name)", default: 0] += 1
                }
                try visitor.visit(row: row, at: index, of: table)
            }
            parser.countRow()
        }
        summary.rowsFound[table.key] = count
        try visitor.endTable(table, rowCount: count)
    }

    /// Meals and food products: objects carried whole, keyed by `id` / `code`.
    mutating func readExtensionTable<Visitor: ArchiveVisitor>(_ table: ExtensionTable, into visitor: inout Visitor) throws {
        summary.rowsFound[table.rawValue] = try readArray(at: table.rawValue) { parser, index in
            let location = "\(table.rawValue)[\(index)]"
            try parser.problems.recovering {
                var object = try parser.readRowObject(at: location, table: table.rawValue)
                if parser.dialect == .android {
                    object = try table.fromAndroid(object, location: location)
                    // The app's form is longer (epoch milliseconds become ISO dates): it is what
                    // the store keeps and export writes, so it is what must fit.
                    try parser.scanner.limits.checkWrittenBack(.object(object), location)
                }
                if let problem = table.problem(with: .object(object)) {
                    throw parser.invalid(location, problem, table: table.rawValue)
                }
                try visitor.visitExtensionRow(table, row: .object(object), at: index)
            }
        }
    }

    /// A row read whole as a JSON object.
    private mutating func readRowObject(at location: String, table: String) throws -> [ByteKey: JSONNode] {
        guard let object = try JSONNode.readWhole(scanner, depth: 2, location: location).objectValue else {
            throw invalid(location, "expected a row object", table: table)
        }
        return object
    }
}
