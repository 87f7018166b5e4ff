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

    /// Equal, and doubles bit for bit (`==` calls -0.0 and 0.0 equal; an archive does not).
    public func isIdentical(to other: FieldValue) -> Bool {
        if case .double(let a) = self, case .double(let b) = other { return a.bitPattern == b.bitPattern }
        return self == other
    }
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

    /// Every value identical (`FieldValue.isIdentical`).
    public func isIdentical(to other: ArchiveRow) -> Bool {
        values.count == other.values.count && zip(values, other.values).allSatisfy { $0.isIdentical(to: $1) }
    }

    public subscript(index: Int) -> FieldValue {
        get { values[index] }
        set { values[index] = newValue }
    }
}
