import CZlib
import PulseSystem

/// Reads the single gzip member of a file (RFC 1952) and delivers its inflated bytes.
///
/// It succeeds only at a real end of stream: zlib checks the trailer's CRC-32 and length, and
/// any byte after the member is an error, so a truncated, corrupted or appended file never
/// reads as sound.
public final class GzipReader: ByteSource {
    /// zlib records the stream's address at `inflateInit2_` and checks it on every call, so the
    /// stream lives at an address of its own for the reader's lifetime (a stored property's
    /// address is the caller's only for the duration of one call).
    private let stream: UnsafeMutablePointer<z_stream>
    /// Whether `inflateInit2_` succeeded, so `deinit` ends only a stream that was started.
    private var started = false
    private let source: ByteSource
    /// The file's name, for messages.
    private let name: String
    private let input: UnsafeMutableRawBufferPointer
    private var inputEnded = false
    private var finished = false
    /// Compressed bytes read from the file so far.
    public private(set) var compressedBytes: Int64 = 0
    /// The stream checksum our header carries (see `GzipWriter`), once the header is parsed.
    private var expectedStreamCRC: UInt32?
    private var headerLength: Int64?
    private var streamCRC: uLong = crc32(0, nil, 0)

    public convenience init(file: SystemFile, bufferSize: Int = 256 * 1024) throws {
        try self.init(source: file, name: file.path, bufferSize: bufferSize)
    }

    /// - Parameter name: how messages call the input.
    public convenience init(source: ByteSource, name: String, bufferSize: Int = 256 * 1024) throws {
        // 15 window bits + 16: expect a gzip wrapper, nothing else.
        try self.init(source: source, name: name, bufferSize: bufferSize, windowBits: 15 + 16)
    }

    /// - Parameter windowBits: zlib's; tests pass an invalid value to make the start fail.
    init(source: ByteSource, name: String, bufferSize: Int, windowBits: Int32) throws {
        self.source = source
        self.name = name
        self.input = .allocate(byteCount: bufferSize, alignment: 16)
        self.stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // Every property is set: from here a throw runs `deinit`, the one place that frees.
        let status = inflateInit2_(stream, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            throw ArchiveError(.io, "cannot start the gzip decoder of \(name) (zlib status \(status))")
        }
        started = true
    }

    deinit {
        if started { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
        input.deallocate()
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard !finished, buffer.count > 0 else { return 0 }
        stream.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(buffer.count)
        while stream.pointee.avail_out == uInt(buffer.count) {
            if stream.pointee.avail_in == 0 && !inputEnded { try refill() }
            let status = inflate(stream, Z_NO_FLUSH)
            switch status {
            case Z_STREAM_END:
                finished = true
                try requireNothingAfterStream()
                return buffer.count - Int(stream.pointee.avail_out)
            case Z_OK:
                continue
            case Z_BUF_ERROR:
                if stream.pointee.avail_in == 0 && inputEnded {
                    throw ArchiveError(.damagedCompression, "the gzip stream of \(name) ends early: the file was cut short")
                }
            case Z_DATA_ERROR, Z_NEED_DICT:
                throw ArchiveError(.damagedCompression, "the gzip stream of \(name) is damaged (\(zlibMessage)) near compressed byte \(position)")
            case Z_MEM_ERROR:
                throw ArchiveError(.io, "out of memory while decompressing \(name)")
            default:
                throw ArchiveError(.damagedCompression, "the gzip stream of \(name) cannot be decoded (zlib status \(status))")
            }
        }
        return buffer.count - Int(stream.pointee.avail_out)
    }

    private var zlibMessage: String {
        stream.pointee.msg.map { String(cString: $0) } ?? "unknown error"
    }

    private var position: Int64 { compressedBytes - Int64(stream.pointee.avail_in) }

    private func refill() throws {
        let n = try source.read(into: input)
        if compressedBytes == 0 { parseHeader(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(input)[0..<n])) }
        if let headerLength {
            // The checksum covers every byte after the header: the deflate data and the trailer.
            let skip = Int(max(0, headerLength - compressedBytes))
            if n > skip {
                streamCRC = crc32(streamCRC, input.baseAddress!.assumingMemoryBound(to: Bytef.self) + skip, uInt(n - skip))
            }
        }
        compressedBytes += Int64(n)
        if n == 0 { inputEnded = true }
        stream.pointee.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_in = uInt(n)
    }

    private func requireNothingAfterStream() throws {
        var trailing = Int64(stream.pointee.avail_in)
        if trailing == 0 && !inputEnded {
            let n = try source.read(into: input)
            compressedBytes += Int64(n)
            trailing = Int64(n)
        }
        if trailing > 0 {
            throw ArchiveError(
                .damagedCompression,
                "\(name) has unexpected bytes after the end of its gzip stream (at byte \(compressedBytes - trailing)): the file was damaged or appended to"
            )
        }
        if let expectedStreamCRC, UInt32(truncatingIfNeeded: streamCRC) != expectedStreamCRC {
            throw ArchiveError(.damagedCompression, "the compressed data of \(name) does not match its checksum: the file was damaged")
        }
    }

    /// Finds our stream checksum in the header's extra field (subfield `PA`, 4 bytes) and where
    /// the header ends. Files without it (written by other tools) get zlib's checks alone.
    private func parseHeader(_ head: UnsafeRawBufferPointer) {
        guard head.count >= 10, head[0] == 0x1F, head[1] == 0x8B else { return }
        let flags = head[3]
        var offset = 10
        var checksum: UInt32?
        if flags & 0x04 != 0 {
            guard head.count >= 12 else { return }
            let extraLength = Int(head[10]) | Int(head[11]) << 8
            offset = 12 + extraLength
            guard head.count >= offset else { return }
            var field = 12
            while field + 4 <= offset {
                let length = Int(head[field + 2]) | Int(head[field + 3]) << 8
                if head[field] == 0x50, head[field + 1] == 0x41, length == 4, field + 8 <= offset {
                    checksum = (0..<4).reduce(UInt32(0)) { $0 | UInt32(head[field + 4 + $1]) << (8 * UInt32($1)) }
                }
                field += 4 + length
            }
        }
        for flag: UInt8 in [0x08, 0x10] where flags & flag != 0 {  // FNAME, FCOMMENT: zero-terminated
            while offset < head.count, head[offset] != 0 { offset += 1 }
            offset += 1
        }
        if flags & 0x02 != 0 { offset += 2 }  // FHCRC
        guard offset <= head.count, let checksum else { return }
        headerLength = Int64(offset)
        expectedStreamCRC = checksum
    }
}

/// Compresses what it is given into one gzip member and writes it to a sink.
///
/// Every byte of the file is covered by a checksum: zlib's CRC-32 and length cover the content;
/// deflate has bits that do not change the content (padding, unused code lengths), so the header
/// also carries a CRC-32 of everything after it (extra subfield `PA`, ignored by other gzip
/// readers), patched in when the stream is complete, and a header CRC (FHCRC) over it all.
/// The patch is why the output must be a `RewritableSink`: a sink that could not take it would
/// get a header whose checksum no reader accepts.
/// No timestamp: two exports of the same data are identical.
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

    /// - Parameters:
    ///   - level: zlib's compression level, 6 by default (what `gzip` uses).
    ///   - keepsTo: content that would inflate past `writerInflateRatio` of these limits is
    ///     stored instead of compressed, so the reader's inflate-ratio guard never refuses a
    ///     file this writer made, whatever the content (an 8 MiB attachment of zeros).
    public init(output: RewritableSink, level: Int32 = 6, bufferSize: Int = 256 * 1024, keepsTo: ArchiveLimits? = .standard) throws {
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

    deinit {
        if started { deflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
        header.deinitialize(count: 1)
        header.deallocate()
        extra.deallocate()
        buffer.deallocate()
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
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
