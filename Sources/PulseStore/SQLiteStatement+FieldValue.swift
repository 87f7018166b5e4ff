import PulseArchive
import PulseSQLite

/// The archive's values in and out of SQLite, as the store keeps them: dates as epoch
/// milliseconds, booleans as 0 and 1, UUIDs as text. The SQLite wrapper knows nothing of
/// archives; this is where the two meet.
extension SQLiteStatement {
    /// Binds `values` to the parameters 1…n after a reset.
    package func bind(_ values: [FieldValue]) throws(SQLiteError) {
        reset()
        for (i, value) in values.enumerated() {
            try bind(value, at: Int32(i + 1))
        }
    }

    package func bind(_ value: FieldValue, at index: Int32) throws(SQLiteError) {
        switch value {
        case .null: try bindNull(at: index)
        case .int(let v), .date(let v): try bind(int64: v, at: index)
        case .double(let v): try bind(double: v, at: index)
        case .bool(let v): try bind(int64: v ? 1 : 0, at: index)
        case .string(let v): try bind(text: v, at: index)
        }
    }

    /// Runs a statement that returns no rows.
    package func run(_ values: [FieldValue] = []) throws(SQLiteError) {
        try bind(values)
        try runToEnd()
    }

    /// Whether the column, read as `value(at:as:)` reads it, holds `expected`, compared
    /// without building the value (no string is allocated): `verify` asks it of every column
    /// of every row. Text is compared byte for byte, which is what an export writes.
    package func column(_ column: Int32, as type: FieldType, holds expected: FieldValue) -> Bool {
        if isNull(at: column) { return expected.isNull }
        switch (type, expected) {
        case (.int, .int(let v)), (.date, .date(let v)): return int64(at: column) == v
        case (.double, .double(let v)): return double(at: column).bitPattern == v.bitPattern
        case (.bool, .bool(let v)): return (int64(at: column) != 0) == v
        case (.string, .string(let text)), (.uuid, .string(let text)): return self.text(at: column, equals: text)
        default: return false
        }
    }

    /// The column as the field type says it was stored.
    package func value(at column: Int32, as type: FieldType) -> FieldValue {
        if isNull(at: column) { return .null }
        switch type {
        case .int: return .int(int64(at: column))
        case .date: return .date(int64(at: column))
        case .double: return .double(double(at: column))
        case .bool: return .bool(int64(at: column) != 0)
        case .string, .uuid: return .string(text(at: column))
        }
    }
}
