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
