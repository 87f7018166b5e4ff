/// A stream of bytes to read from: a file, the inflated content of a gzip file, bytes read
/// ahead on another thread. It names the C handles it reads through (`HandleHolder`), so that
/// a thread reading it for someone else adopts them.
public protocol ByteSource: AnyObject, HandleHolder {
    /// Fills the start of `buffer`; returns the number of bytes, 0 only at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// A stream of bytes to write to: a file, or a gzip deflater in front of one. It names the C
/// handles it writes through (`HandleHolder`), so that a thread writing it for someone else
/// adopts them.
public protocol ByteSink: AnyObject, HandleHolder {
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

/// Counts the bytes read through it: the size of a stream known only at its end (a pipe), or
/// how far a reader has come in a file.
public final class CountedSource: ByteSource {
    private let base: ByteSource
    public private(set) var count: Int64 = 0

    public init(_ base: ByteSource) { self.base = base }

    public var handleOwners: [HandleOwner] { base.handleOwners }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try base.read(into: buffer)
        count += Int64(n)
        return n
    }
}
