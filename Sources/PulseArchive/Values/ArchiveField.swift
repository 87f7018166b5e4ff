
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
