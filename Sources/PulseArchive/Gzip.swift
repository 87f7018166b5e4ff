import CZlib

/// Reads the single gzip member of a file (RFC 1952) and delivers its inflated bytes.
///
/// It succeeds only at a real end of stream: zlib checks the trailer's CRC-32 and length, and
/// any byte after the member is an error, so a truncated, corrupted or appended file never
/// reads as sound.
public final class GzipReader: ByteSource {
    private var stream = z_stream()
    private let source: ByteSource
    /// The file's name, for messages.
    private let name: String
    private let input: UnsafeMutableRawBufferPointer
    private var inputEnded = false
    private var finished = false
    /// Compressed bytes read from the file so far.
    public private(set) var compressedBytes: Int64 = 0

    public convenience init(file: SystemFile, bufferSize: Int = 256 * 1024) throws {
        try self.init(source: file, name: file.path, bufferSize: bufferSize)
    }

    /// - Parameter name: how messages call the input.
    public init(source: ByteSource, name: String, bufferSize: Int = 256 * 1024) throws {
        self.source = source
        self.name = name
        self.input = .allocate(byteCount: bufferSize, alignment: 16)
        // 15 window bits + 16: expect a gzip wrapper, nothing else.
        let status = inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            input.deallocate()
            throw ArchiveError(.io, "cannot start the gzip decoder (zlib status \(status))")
        }
    }

    deinit {
        inflateEnd(&stream)
        input.deallocate()
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard !finished, buffer.count > 0 else { return 0 }
        stream.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(buffer.count)
        while stream.avail_out == uInt(buffer.count) {
            if stream.avail_in == 0 && !inputEnded { try refill() }
            let status = inflate(&stream, Z_NO_FLUSH)
            switch status {
            case Z_STREAM_END:
                finished = true
                try requireNothingAfterStream()
                return buffer.count - Int(stream.avail_out)
            case Z_OK:
                continue
            case Z_BUF_ERROR:
                if stream.avail_in == 0 && inputEnded {
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
        return buffer.count - Int(stream.avail_out)
    }

    private var zlibMessage: String {
        stream.msg.map { String(cString: $0) } ?? "unknown error"
    }

    private var position: Int64 { compressedBytes - Int64(stream.avail_in) }

    private func refill() throws {
        let n = try source.read(into: input)
        compressedBytes += Int64(n)
        if n == 0 { inputEnded = true }
        stream.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.avail_in = uInt(n)
    }

    private func requireNothingAfterStream() throws {
        var trailing = Int64(stream.avail_in)
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
    }
}

/// Compresses what it is given into one gzip member and writes it to a sink.
///
/// The header carries a header CRC (FHCRC) and no timestamp, so every byte of the file is
/// covered by a checksum and two exports of the same data are identical.
public final class GzipWriter: ByteSink {
    private var stream = z_stream()
    private var header = gz_header()
    private let output: ByteSink
    private let buffer: UnsafeMutableRawBufferPointer
    /// Uncompressed bytes accepted so far.
    public private(set) var uncompressedBytes: Int64 = 0

    /// - Parameter level: zlib's compression level, 6 by default (what `gzip` uses).
    public init(output: ByteSink, level: Int32 = 6, bufferSize: Int = 256 * 1024) throws {
        self.output = output
        self.buffer = .allocate(byteCount: bufferSize, alignment: 16)
        let status = deflateInit2_(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
                                   ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            buffer.deallocate()
            throw ArchiveError(.io, "cannot start the gzip encoder (zlib status \(status))")
        }
        header.hcrc = 1
        header.os = 255  // unknown: the file is the same whoever wrote it
        deflateSetHeader(&stream, &header)
    }

    deinit {
        deflateEnd(&stream)
        buffer.deallocate()
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        uncompressedBytes += Int64(bytes.count)
        stream.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(bytes.count)
        while stream.avail_in > 0 {
            try deflateStep(flush: Z_NO_FLUSH)
        }
    }

    public func finish() throws {
        stream.next_in = nil
        stream.avail_in = 0
        while try deflateStep(flush: Z_FINISH) != Z_STREAM_END {}
        try output.finish()
    }

    @discardableResult
    private func deflateStep(flush: Int32) throws -> Int32 {
        stream.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(buffer.count)
        let status = deflate(&stream, flush)
        guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
            throw ArchiveError(.io, "gzip compression failed (zlib status \(status))")
        }
        let produced = buffer.count - Int(stream.avail_out)
        if produced > 0 {
            try output.write(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<produced]))
        }
        return status
    }
}
