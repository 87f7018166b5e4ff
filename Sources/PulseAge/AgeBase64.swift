/// Standard base64 (RFC 4648 §4) as the age header writes it: no padding, and decoding refuses
/// padding, characters outside the alphabet, an impossible length, and non-canonical encodings
/// (unused bits of the last character not zero). The armor uses the padded form, equally strict.
enum AgeBase64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let values = decodingTable(alphabet)

    static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            let b0 = UInt32(bytes[index])
            let b1 = remaining > 1 ? UInt32(bytes[index + 1]) : 0
            let b2 = remaining > 2 ? UInt32(bytes[index + 2]) : 0
            let group = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(group >> 18 & 63)])
            out.append(alphabet[Int(group >> 12 & 63)])
            if remaining > 1 { out.append(alphabet[Int(group >> 6 & 63)]) }
            if remaining > 2 { out.append(alphabet[Int(group & 63)]) }
            index += 3
        }
        return out
    }

    /// Decodes unpadded canonical base64, or nil.
    static func decode<C: Collection>(_ text: C) -> [UInt8]? where C.Element == UInt8 {
        guard text.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in text {
            let value = values[Int(character)]
            guard value >= 0 else { return nil }
            accumulator = (accumulator << 6 | UInt32(value)) & 0xffff
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // Canonical: the bits left over (2 or 4) are zero.
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }

    /// Decodes padded canonical base64 (length a multiple of 4, `=` only at the end), or nil.
    static func decodePadded<C: BidirectionalCollection>(_ text: C) -> [UInt8]? where C.Element == UInt8 {
        guard text.count % 4 == 0 else { return nil }
        var body = text[...]
        var padding = 0
        while padding < 2, body.last == UInt8(ascii: "=") {
            body = body.dropLast()
            padding += 1
        }
        guard body.count + padding == text.count, !body.contains(UInt8(ascii: "=")) else { return nil }
        return decode(body)
    }
}

/// For each byte, its index in `alphabet`, or -1: the decoding table of a base-N alphabet.
func decodingTable(_ alphabet: [UInt8]) -> [Int8] {
    var table = [Int8](repeating: -1, count: 256)
    for (index, character) in alphabet.enumerated() { table[Int(character)] = Int8(index) }
    return table
}
