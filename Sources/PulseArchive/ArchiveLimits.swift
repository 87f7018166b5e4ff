/// The bounds that keep a hostile archive from crashing the reader or exhausting memory
/// (archive-format.md §1.4). Passing one refuses the file with a message naming the limit.
public struct ArchiveLimits: Sendable, Equatable {
    /// Deepest JSON nesting accepted anywhere, unknown keys included.
    public var maxDepth: Int
    /// Longest single string after decoding escapes, attachments included.
    public var maxStringBytes: Int
    /// Longest number literal.
    public var maxNumberLength: Int
    /// Largest decompressed (or plain) archive content.
    public var maxUncompressedBytes: Int64
    /// Largest ratio of decompressed to compressed bytes, checked once
    /// `inflateRatioGrace` bytes have come out. JSON archives deflate 5–30 times; a stream of
    /// zeros a thousand times (a decompression bomb).
    public var maxInflateRatio: Double
    public var inflateRatioGrace: Int64

    public init(maxDepth: Int = 256, maxStringBytes: Int = 256 << 20, maxNumberLength: Int = 64,
                maxUncompressedBytes: Int64 = 64 << 30, maxInflateRatio: Double = 200, inflateRatioGrace: Int64 = 8 << 20) {
        self.maxDepth = maxDepth
        self.maxStringBytes = maxStringBytes
        self.maxNumberLength = maxNumberLength
        self.maxUncompressedBytes = maxUncompressedBytes
        self.maxInflateRatio = maxInflateRatio
        self.inflateRatioGrace = inflateRatioGrace
    }

    public static let standard = ArchiveLimits()
}
