import PulseArchive
import PulseSystem

/// How to write an archive of a store.
public struct ExportOptions {
    public var formatVersion: Int64
    public var appVersion: String
    /// Milliseconds since 1970, recorded as `exportedAt`.
    public var exportedAt: Int64
    /// Compress with gzip (our format) or write plain JSON (the app's own).
    public var compressed: Bool
    /// Deflate threads (`GzipWriter`'s `threads`): the archive's bytes do not depend on it.
    public var compressionThreads = GzipWriter.availableThreads
    /// End gzip blocks at content-defined points too (`GzipWriter`'s `rsyncable`).
    public var rsyncable = false
    /// See `ArchiveWriterOptions.envelopeKeysFirst`.
    public var envelopeKeysFirst: Bool
    /// Called every few thousand rows with the rows written and the total.
    public var progress: ((Int, Int) -> Void)?
    /// See `ArchiveWriterOptions.limits`: raised, the archive needs the same limits to import.
    public var limits: ArchiveLimits
    /// Wraps the output in a transformation of the finished archive's bytes (age encryption):
    /// the sink it returns receives exactly the bytes a plain export writes, and its `finish`
    /// ends the output too.
    public var sealing: Sealing?
    /// The sealing of `output`; `plaintextBytes` is the length of what will be written when it
    /// is known before the first byte (an archive finished in a scratch file), else nil.
    public typealias Sealing = (_ output: ByteSink, _ plaintextBytes: Int64?) throws -> ByteSink

    public init(formatVersion: Int64 = ArchiveFormat.newestVersion, appVersion: String, exportedAt: Int64,
                compressed: Bool = true, envelopeKeysFirst: Bool = true, limits: ArchiveLimits = .standard,
                progress: ((Int, Int) -> Void)? = nil, sealing: Sealing? = nil) {
        self.limits = limits
        self.sealing = sealing
        self.formatVersion = formatVersion
        self.appVersion = appVersion
        self.exportedAt = exportedAt
        self.compressed = compressed
        self.envelopeKeysFirst = envelopeKeysFirst
        self.progress = progress
    }
}
