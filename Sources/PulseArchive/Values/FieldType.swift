/// The JSON type of one field, as the app's dialect writes it.
public enum FieldType: String, Sendable, Equatable {
    /// A canonical UUID string; read in either case, written upper-case.
    case uuid
    /// An ISO-8601 instant, kept as integer milliseconds since 1970.
    case date
    case string
    /// A 64-bit integer; the JSON value must be integral.
    case int
    /// A finite double.
    case double
    case bool
}
