import PulseSystem

/// Counts what passes through and stops a source that grows past a limit, so a hostile
/// file cannot make a reader work forever.
final class CountingSource: ByteSource {
    private let base: ByteSource
    private let limits: ArchiveLimits
    /// Compressed bytes read so far, for the inflate ratio; nil for a plain file.
    private let compressed: (() -> Int64)?
    private(set) var count: Int64 = 0

    var handleOwners: [HandleOwner] { base.handleOwners }

    init(_ base: ByteSource, limits: ArchiveLimits, compressed: (() -> Int64)?) {
        self.base = base
        self.limits = limits
        self.compressed = compressed
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try base.read(into: buffer)
        TestPausePoint.reached("read")
        count += Int64(n)
        if count > limits.maxUncompressedBytes {
            throw ArchiveError(
                .limitExceeded,
                "the archive's content passes the maximum uncompressed size of \(limits.maxUncompressedBytes) bytes",
                limit: .uncompressedBytes
            )
        }
        if let compressed, limits.exceedsInflateRatio(content: count, compressed: compressed(), ratio: limits.maxInflateRatio, grace: limits.inflateRatioGrace) {
            throw ArchiveError(
                .limitExceeded,
                "the archive inflates more than \(Int(limits.maxInflateRatio)) times its compressed size, like a decompression bomb",
                limit: .inflateRatio
            )
        }
        return n
    }
}
