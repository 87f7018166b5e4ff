import CZlib

/// The bytes of a gzip member around the deflate stream (RFC 1952), and deflate's stored
/// blocks (RFC 1951 3.2.4), which `GzipWriter` writes itself: the workers deflate raw blocks.
enum GzipFraming {
    /// Where the header ends and the checked stream begins: 10 fixed bytes, XLEN, the 8-byte
    /// extra field (subfield `PA`), the header CRC.
    static let headerLength = 22
    /// ID1 and ID2, the first two bytes of every gzip member.
    static let magic: [UInt8] = [0x1F, 0x8B]
    /// Where the `PA` subfield's 4-byte stream checksum sits in the header.
    static let streamCRCOffset = 16

    /// The header with a stream checksum of 0, patched in by `patch(streamCRC:)` at the end.
    /// FLG: FEXTRA | FHCRC. XFL as zlib sets it for the level; OS 255 (unknown), so the file is
    /// the same whoever wrote it.
    static func header(modificationTime: UInt32, level: Int32) -> [UInt8] {
        let xfl: UInt8 = level == 9 ? 2 : (level < 2 ? 4 : 0)
        var bytes = magic + [8, 0x06]
        bytes += littleEndian(modificationTime)
        bytes += [xfl, 255, 8, 0, 0x50, 0x41, 4, 0, 0, 0, 0, 0]
        return withHeaderCRC(bytes)
    }

    /// The header's last 6 bytes once the stream checksum is known: the checksum, then the
    /// header CRC over everything before it.
    static func patch(header: [UInt8], streamCRC: UInt32) -> [UInt8] {
        var bytes = Array(header[0..<streamCRCOffset])
        bytes += littleEndian(streamCRC)
        return Array(withHeaderCRC(bytes)[streamCRCOffset...])
    }

    /// CRC-32 and length of the content, mod 2^32.
    static func trailer(contentCRC: UInt32, contentBytes: Int64) -> [UInt8] {
        littleEndian(contentCRC) + littleEndian(UInt32(truncatingIfNeeded: contentBytes))
    }

    /// `content` as stored (uncompressed) deflate blocks of at most 65 535 bytes, the last
    /// one marked final when `last`. The stream before must end on a byte boundary (a sync
    /// flush), and so does this.
    static func storedBlocks(_ content: ArraySlice<UInt8>, last: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(content.count + 5 * (content.count / 65_535 + 1))
        var start = content.startIndex
        repeat {
            let end = min(start + 65_535, content.endIndex)
            let length = UInt16(end - start)
            out.append(last && end == content.endIndex ? 1 : 0)  // BFINAL, BTYPE 00, padding
            out += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
            out += content[start..<end]
            start = end
        } while start < content.endIndex
        return out
    }

    static func crc(_ bytes: [UInt8], after crc: uLong = crc32(0, nil, 0)) -> uLong {
        bytes.withUnsafeBufferPointer { crc32(crc, $0.baseAddress, uInt($0.count)) }
    }

    private static func withHeaderCRC(_ bytes: [UInt8]) -> [UInt8] {
        let crc = UInt32(truncatingIfNeeded: crc(bytes))
        return bytes + [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF)]
    }

    private static func littleEndian(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) }
    }
}
