/// One decoded field value. UUIDs are canonical upper-case strings; dates are milliseconds.
public enum FieldValue: Sendable, Equatable, Hashable {
    case null
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case string(String)
    /// Milliseconds since 1970-01-01T00:00:00Z.
    case date(Int64)

    public var isNull: Bool { if case .null = self { return true } else { return false } }
}

/// One row of a table: values in the order of the table's `fields`.
public struct ArchiveRow: Sendable, Equatable, Hashable {
    public var values: [FieldValue]

    public init(values: [FieldValue]) {
        self.values = values
    }

    /// A row of the given table with every field null, ready to be filled in.
    public init(table: ArchiveTable) {
        self.values = Array(repeating: .null, count: table.fields.count)
    }

    public subscript(index: Int) -> FieldValue {
        get { values[index] }
        set { values[index] = newValue }
    }
}
