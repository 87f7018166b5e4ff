/// Where an archive came from, as told by its envelope.
public enum ArchiveDialect: String, Sendable, Equatable {
    /// The iOS app and this tool: ISO-8601 date strings.
    case ios
    /// The Android port: epoch-millisecond numbers.
    case android
}
