/// How to write an archive.
public struct ArchiveWriterOptions: Sendable {
    /// 2 (default) writes every table; 1 leaves out `readinessDailies`, which apps on the
    /// format-1 line cannot import.
    public var formatVersion: Int64
    public var appVersion: String
    /// Milliseconds since 1970.
    public var exportedAt: Int64
    /// Puts `formatVersion` and `appVersion` before the tables, so a reader learns the version
    /// before any data, and `counts` and `exportedAt`, which change every night, after
    /// everything (our files; `ArchiveWriter`). False sorts every key, as the app does.
    public var envelopeKeysFirst: Bool
    /// The limits of the reader that will read the archive back: a value past one is refused,
    /// named, before anything is written.
    public var limits: ArchiveLimits

    public init(formatVersion: Int64 = ArchiveFormat.newestVersion, appVersion: String, exportedAt: Int64,
                envelopeKeysFirst: Bool = true, limits: ArchiveLimits = .standard) {
        self.formatVersion = formatVersion
        self.appVersion = appVersion
        self.exportedAt = exportedAt
        self.envelopeKeysFirst = envelopeKeysFirst
        self.limits = limits
    }

    /// The tables this format version carries.
    public var tables: [ArchiveTable] {
        formatVersion >= 2 ? ArchiveTable.all : ArchiveTable.all.filter { $0 != .readinessDailies }
    }
}
