/// A stream of bytes to read from: a file, or the inflated content of a gzip file.
public protocol ByteSource: AnyObject {
    /// Fills the start of `buffer`; returns the number of bytes, 0 only at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// A stream of bytes to write to: a file, or a gzip deflater in front of one.
public protocol ByteSink: AnyObject {
    func write(_ bytes: UnsafeRawBufferPointer) throws
    /// Writes whatever is buffered and ends the stream (the gzip trailer, for example).
    func finish() throws
}

/// A sink that can rewrite bytes it already wrote: a gzip header carries a checksum of the
/// stream after it, known only at the end (`GzipWriter` requires one, so no sink can miss it).
public protocol RewritableSink: ByteSink {
    /// Bytes written so far; `patch` counts its offsets the same way, from the sink's first byte.
    var bytesWritten: Int64 { get }
    /// Rewrites bytes already written, from `offset` on.
    func patch(_ bytes: [UInt8], at offset: Int64) throws
}

extension SystemFile: ByteSource {}

/// Writes straight to a file.
public final class FileSink: RewritableSink {
    public let file: SystemFile
    public private(set) var bytesWritten: Int64 = 0
    /// Where the file's position stood when the sink began, so that a patch lands on the
    /// sink's own bytes even when the file held others before them.
    private let origin: Int64

    public init(_ file: SystemFile) {
        self.file = file
        origin = file.position()
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        try file.write(bytes)
        bytesWritten += Int64(bytes.count)
    }

    public func finish() throws {}

    public func patch(_ bytes: [UInt8], at offset: Int64) throws {
        try file.write(bytes, at: origin + offset)
    }
}

/// Counts what passes through and stops a source that grows past a limit, so a hostile
/// file cannot make a reader work forever.
final class CountingSource: ByteSource {
    private let base: ByteSource
    private let limits: ArchiveLimits
    /// Compressed bytes read so far, for the inflate ratio; nil for a plain file.
    private let compressed: (() -> Int64)?
    private(set) var count: Int64 = 0

    init(_ base: ByteSource, limits: ArchiveLimits, compressed: (() -> Int64)?) {
        self.base = base
        self.limits = limits
        self.compressed = compressed
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try base.read(into: buffer)
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
