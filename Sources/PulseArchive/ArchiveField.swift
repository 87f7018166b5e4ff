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

/// One field of a table: its exact JSON key, its type, and whether it may be absent.
public struct ArchiveField: Sendable, Equatable {
    public let name: String
    public let type: FieldType
    public let isOptional: Bool
    /// Tool-only fields the app does not archive (Android extras); written only when set.
    public let isExtension: Bool

    public init(_ name: String, _ type: FieldType, optional: Bool = false, extension isExtension: Bool = false) {
        self.name = name
        self.type = type
        self.isOptional = optional || isExtension
        self.isExtension = isExtension
    }
}
