/// One decoded field value. UUIDs are canonical upper-case strings; dates are milliseconds.
///
/// Two values are equal when an export writes them the same: doubles compare by their bits,
/// so negative zero (written `-0`) is not zero, which `==` on `Double` would say it is, and a
/// round trip that lost its sign would pass `verify`.
public enum FieldValue: Sendable, Hashable {
    case null
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case string(String)
    /// Milliseconds since 1970-01-01T00:00:00Z.
    case date(Int64)

    public var isNull: Bool { if case .null = self { return true } else { return false } }

    public static func == (lhs: FieldValue, rhs: FieldValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.int(let a), .int(let b)), (.date(let a), .date(let b)): return a == b
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern
        case (.bool(let a), .bool(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .int(let v): hasher.combine(1); hasher.combine(v)
        case .double(let v): hasher.combine(2); hasher.combine(v.bitPattern)
        case .bool(let v): hasher.combine(3); hasher.combine(v)
        case .string(let v): hasher.combine(4); hasher.combine(v)
        case .date(let v): hasher.combine(5); hasher.combine(v)
        }
    }
}

