/// One row of a table: values in the order of the table's `fields`.
public struct ArchiveRow: Sendable, Equatable, Hashable {
    public var values: [FieldValue]

    public init(values: [FieldValue]) {
        self.values = values
    }

    /// The bytes its text values hold beyond the row itself: what a queue of rows waiting for
    /// another thread must count, or ten rows of 12 MiB strings wait there as "ten rows".
    public var textBytes: Int {
        var total = 0
        for value in values { if case .string(let text) = value { total += text.utf8.count } }
        return total
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
