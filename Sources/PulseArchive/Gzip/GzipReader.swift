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
    /// What is wrong after the stream's end (bytes after it, a checksum that does not match),
    /// thrown by every read once the data before it has been read.
    private var errorAtEnd: Error?
    /// Compressed bytes read from the file so far.
    public private(set) var compressedBytes: Int64 = 0
    /// The stream checksum our header carries (see `GzipWriter`), once the header is parsed.
    private var expectedStreamCRC: UInt32?
    private var headerLength: Int64?
    private var streamCRC: uLong = crc32(0, nil, 0)
    /// The thread that may use the zlib stream now (zlib streams have no lock).
    private let owner = HandleOwner("a zlib inflate stream")

    public var handleOwners: [HandleOwner] { [owner] + source.handleOwners }

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
            throw ArchiveError(status == Z_MEM_ERROR ? .machineFailure : .io, "cannot start the gzip decoder of \(name): \(ZlibStatus.describe(status))")
        }
        started = true
    }

    deinit {
        if started {
            owner.check()
            inflateEnd(stream)
        }
        stream.deinitialize(count: 1)
        stream.deallocate()
        input.deallocate()
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        owner.check()
        if let errorAtEnd { throw errorAtEnd }
        guard !finished, buffer.count > 0 else { return 0 }
        stream.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(buffer.count)
        while stream.pointee.avail_out == uInt(buffer.count) {
            if stream.pointee.avail_in == 0 && !inputEnded { try refill() }
            let status = inflate(stream, Z_NO_FLUSH)
            switch status {
            case Z_STREAM_END:
                finished = true
                // Said on the next read, once the reader has the data of this one: a verifier
                // then lists every table before the error, instead of those before this read.
                do { try requireNothingAfterStream() } catch { errorAtEnd = error }
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
                throw ArchiveError(.machineFailure, "out of memory while decompressing \(name)")
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
        var after = UnsafeRawBufferPointer(start: stream.pointee.next_in, count: Int(trailing))
        if trailing == 0 && !inputEnded {
            let n = try source.read(into: input)
            compressedBytes += Int64(n)
            trailing = Int64(n)
            after = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(input)[0..<n])
        }
        if trailing > 0 {
            // gzip -dc reads members joined by `cat` as one file; an archive is one member.
            let what = after.starts(with: GzipFraming.magic) ? "a second gzip member" : "unexpected bytes"
            throw ArchiveError(
                .damagedCompression,
                "\(name) has \(what) after the end of its gzip stream (at byte \(compressedBytes - trailing)): the file was damaged or appended to"
            )
        }
        if let expectedStreamCRC, UInt32(truncatingIfNeeded: streamCRC) != expectedStreamCRC {
            throw ArchiveError(.damagedCompression, "the compressed data of \(name) does not match its checksum: the file was damaged")
        }
    }

    /// Finds our stream checksum in the header's extra field (subfield `PA`, 4 bytes) and where
    /// the header ends. Files without it (written by other tools) get zlib's checks alone.
    private func parseHeader(_ head: UnsafeRawBufferPointer) {
        guard head.count >= 10, head.starts(with: GzipFraming.magic) else { return }
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

