import PulseArchive

/// The app's duplicate-entries refusal, worded once for `import` (which stops at the first
/// repeat) and `verify` (which names every repeat and the row it repeats).
package enum DuplicateKeyMessage {
    package static func row(_ table: ArchiveTable, index: Int, key: FieldValue, firstRow: Int? = nil) -> String {
        "this file contains duplicate \(table.entity) entries and can't be imported: \(table.key)[\(index)] repeats \(table.uniqueKey) "
            + describe(key) + of(table.key, firstRow)
    }

    package static func extensionRow(_ table: ExtensionTable, index: Int, key: FieldValue, firstRow: Int? = nil) -> String {
        "this file contains duplicate \(table.rawValue) entries: \(table.rawValue)[\(index)] repeats \(table.uniqueKey) "
            + describe(key) + of(table.rawValue, firstRow)
    }

    private static func of(_ table: String, _ firstRow: Int?) -> String {
        firstRow.map { " of \(table)[\($0)]" } ?? ""
    }

    private static func describe(_ value: FieldValue) -> String {
        switch value {
        case .string(let s): return s.debugDescription
        case .int(let v), .date(let v): return String(v)
        default: return "\(value)"
        }
    }
}
