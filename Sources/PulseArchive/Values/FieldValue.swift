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

