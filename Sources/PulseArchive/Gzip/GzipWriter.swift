import CZlib
import PulseSystem

/// Compresses what it is given into one gzip member and writes it to a sink.
///
/// Every byte of the file is covered by a checksum: zlib's CRC-32 and length cover the content;
/// deflate has bits that do not change the content (padding, unused code lengths), so the header
/// also carries a CRC-32 of everything after it (extra subfield `PA`, ignored by other gzip
/// readers), patched in when the stream is complete, and a header CRC (FHCRC) over it all.
/// The patch is why the output must be a `RewritableSink`: a sink that could not take it would
/// get a header whose checksum no reader accepts.
/// The header's MTIME is the instant the caller gives (an export's `exportedAt`), so two
/// exports of the same data at the same instant are identical, and `prune` can read when a
/// backup was made without decompressing it (docs/backups.md); none (0) by default.
public final class GzipWriter: ByteSink {
    /// zlib records the stream's address at `deflateInit2_` and checks it on every call, so the
    /// stream lives at an address of its own for the writer's lifetime.
    private let stream: UnsafeMutablePointer<z_stream>
    /// zlib keeps the header's address from `deflateSetHeader` (and, through it, the extra
    /// field's) until a later `deflate` writes the header: both live as long as the stream.
    private let header: UnsafeMutablePointer<gz_header>
    private let extra: UnsafeMutablePointer<Bytef>
    /// Whether `deflateInit2_` succeeded, so `deinit` ends only a stream that was started.
    private var started = false
    private let output: RewritableSink
    /// Where the header begins in the output, for the patch.
    private let headerOffset: Int64
    private let buffer: UnsafeMutableRawBufferPointer
    /// Where the header ends and the checked stream begins: 10 fixed bytes, XLEN, the 8-byte
    /// extra field, the header CRC.
    private static let headerLength = 22
    private var produced = 0
    private var headerBytes: [UInt8] = []
    private var streamCRC: uLong = crc32(0, nil, 0)
    /// Uncompressed bytes accepted so far.
    public private(set) var uncompressedBytes: Int64 = 0
    private let level: Int32
    /// The limits whose inflate-ratio rule the output keeps to; nil for none (tests that build
    /// a decompression bomb).
    private let keepsTo: ArchiveLimits?
    /// True while input is stored rather than compressed, to bring the ratio down.
    private var storing = false
    /// Input is handed to zlib in slices this large, the ratio checked after each.
    private static let slice = 64 * 1024
    /// The thread that may use the zlib stream now (zlib streams have no lock).
    private let owner = HandleOwner("a zlib deflate stream")

    public var handleOwners: [HandleOwner] { [owner] + output.handleOwners }

    /// - Parameters:
    ///   - level: zlib's compression level, 6 by default (what `gzip` uses).
    ///   - keepsTo: content that would inflate past `writerInflateRatio` of these limits is
    ///     stored instead of compressed, so the reader's inflate-ratio guard never refuses a
    ///     file this writer made, whatever the content (an 8 MiB attachment of zeros).
    ///   - modificationTime: the header's MTIME, seconds since 1970 (0: none), as
    ///     `headerTime(millisecondsSince1970:)` gives it.
    public init(output: RewritableSink, level: Int32 = 6, bufferSize: Int = 256 * 1024, keepsTo: ArchiveLimits? = .standard,
                modificationTime: UInt32 = 0) throws {
        self.output = output
        self.level = level
        self.keepsTo = keepsTo
        headerOffset = output.bytesWritten
        buffer = .allocate(byteCount: bufferSize, alignment: 16)
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        header = .allocate(capacity: 1)
        header.initialize(to: gz_header())
        extra = .allocate(capacity: 8)
        // Subfield "PA", 4 bytes: the stream checksum, zero until `finish` patches it in.
        for (i, byte) in [0x50, 0x41, 4, 0, 0, 0, 0, 0].enumerated() { extra[i] = Bytef(byte) }
        header.pointee.extra = extra
        header.pointee.extra_len = 8
        header.pointee.hcrc = 1
        header.pointee.os = 255  // unknown: the file is the same whoever wrote it
        header.pointee.time = uLong(modificationTime)
        // Every property is set: from here a throw runs `deinit`, the one place that frees.
        let status = deflateInit2_(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
                                   ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            throw ArchiveError(.io, "cannot start the gzip encoder (zlib status \(status))")
        }
        started = true
        let headerStatus = deflateSetHeader(stream, header)
        guard headerStatus == Z_OK else {
            throw ArchiveError(.io, "cannot set the gzip header (zlib status \(headerStatus))")
        }
    }

    /// The MTIME for an instant in milliseconds since 1970: its whole seconds, or 0 (gzip's
    /// "no time") for an instant its 32 unsigned bits cannot hold (before 1970, after 2106).
    public static func headerTime(millisecondsSince1970 milliseconds: Int64) -> UInt32 {
        let seconds = milliseconds / 1000
        guard milliseconds >= 0, seconds <= Int64(UInt32.max) else { return 0 }
        return UInt32(seconds)
    }

    deinit {
        if started {
            owner.check()
            deflateEnd(stream)
        }
        stream.deinitialize(count: 1)
        stream.deallocate()
        header.deinitialize(count: 1)
        header.deallocate()
        extra.deallocate()
        buffer.deallocate()
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        owner.check()
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        var offset = 0
        while offset < bytes.count {
            let n = min(Self.slice, bytes.count - offset)
            uncompressedBytes += Int64(n)
            stream.pointee.next_in = UnsafeMutablePointer(mutating: (base + offset).assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(n)
            while stream.pointee.avail_in > 0 {
                try deflateStep(flush: Z_NO_FLUSH)
            }
            offset += n
            try keepRatio()
        }
    }

    /// Stores input while the content per compressed byte is past the writer's ratio, and
    /// compresses again once it is below half of it.
    private func keepRatio() throws {
        guard let limits = keepsTo else { return }
        let ratio = limits.writerInflateRatio, grace = limits.inflateRatioGrace / 2
        let compressed = Int64(produced)
        if !storing, limits.exceedsInflateRatio(content: uncompressedBytes, compressed: compressed, ratio: ratio, grace: grace) {
            try switchLevel(to: 0)
            storing = true
        } else if storing, !limits.exceedsInflateRatio(content: uncompressedBytes, compressed: compressed, ratio: ratio / 2, grace: grace) {
            try switchLevel(to: level)
            storing = false
        }
    }

    /// Changes the compression level after compressing (and writing out) all zlib holds.
    private func switchLevel(to newLevel: Int32) throws {
        repeat { try deflateStep(flush: Z_BLOCK) } while stream.pointee.avail_out == 0
        stream.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(buffer.count)
        let status = deflateParams(stream, newLevel, Z_DEFAULT_STRATEGY)
        try emit()
        guard status == Z_OK else { throw ArchiveError(.io, "gzip compression failed (zlib status \(status) changing the level)") }
    }

    public func finish() throws {
        owner.check()
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
        while try deflateStep(flush: Z_FINISH) != Z_STREAM_END {}
        // A finished stream always holds the whole header; checked all the same, so that a
        // checksum is never silently left out.
        guard headerBytes.count == Self.headerLength else {
            throw ArchiveError(.io, "gzip compression ended before its header was complete (\(headerBytes.count) bytes)")
        }
        var patched = Array(headerBytes[0..<20])
        let checksum = UInt32(truncatingIfNeeded: streamCRC)
        for i in 0..<4 { patched[16 + i] = UInt8(truncatingIfNeeded: checksum >> (8 * UInt32(i))) }
        let headerCRC = UInt32(truncatingIfNeeded: patched.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) })
        try output.patch(Array(patched[16..<20]) + [UInt8(headerCRC & 0xFF), UInt8(headerCRC >> 8 & 0xFF)], at: headerOffset + 16)
        try output.finish()
    }

    @discardableResult
    private func deflateStep(flush: Int32) throws -> Int32 {
        stream.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(buffer.count)
        let status = deflate(stream, flush)
        guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
            throw ArchiveError(.io, "gzip compression failed (zlib status \(status))")
        }
        try emit()
        return status
    }

    /// Writes out what zlib put in the buffer.
    private func emit() throws {
        let count = buffer.count - Int(stream.pointee.avail_out)
        if count > 0 {
            let bytes = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<count])
            if headerBytes.count < Self.headerLength { headerBytes += bytes.prefix(Self.headerLength - headerBytes.count) }
            let skip = max(0, Self.headerLength - produced)
            if count > skip {
                streamCRC = crc32(streamCRC, bytes.baseAddress!.assumingMemoryBound(to: Bytef.self) + skip, uInt(count - skip))
            }
            produced += count
            try output.write(bytes)
        }
    }
}
