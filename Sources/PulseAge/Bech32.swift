/// Bech32 (BIP 173) as age uses it: the original checksum constant 1, no length limit, one case
/// throughout (age writes recipients lower case and identities upper case). Decoding is
/// strict: mixed case, a bad checksum, characters outside the alphabet, or padding bits that
/// are not zero are refused.
enum Bech32 {
    private static let alphabet = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
    private static let values = decodingTable(alphabet)

    /// `hrp` (lower case) + "1" + data + checksum, in lower case (callers upper-case it).
    static func encode(hrp: String, data: [UInt8]) -> String {
        let hrpBytes = Array(hrp.utf8)
        let words = convertBits(data, from: 8, to: 5, pad: true)!
        let checksum = makeChecksum(hrp: hrpBytes, words: words)
        var out = hrpBytes
        out.append(UInt8(ascii: "1"))
        for word in words + checksum { out.append(alphabet[Int(word)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The human-readable part (lower-cased) and the data, or nil when `text` is not valid
    /// Bech32.
    static func decode(_ text: String) -> (hrp: String, data: [UInt8])? {
        let bytes = Array(text.utf8)
        guard bytes.allSatisfy({ $0 >= 33 && $0 <= 126 }) else { return nil }
        let hasLower = bytes.contains { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") }
        let hasUpper = bytes.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
        guard !(hasLower && hasUpper) else { return nil }
        let lower = bytes.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }
        guard let separator = lower.lastIndex(of: UInt8(ascii: "1")), separator >= 1, lower.count - separator - 1 >= 6 else { return nil }
        let hrp = Array(lower[..<separator])
        var words: [UInt8] = []
        words.reserveCapacity(lower.count - separator - 1)
        for character in lower[(separator + 1)...] {
            let value = values[Int(character)]
            guard value >= 0 else { return nil }
            words.append(UInt8(value))
        }
        guard polymod(expand(hrp) + words) == 1 else { return nil }
        guard let data = convertBits(Array(words.dropLast(6)), from: 5, to: 8, pad: false) else { return nil }
        return (String(decoding: hrp, as: UTF8.self), data)
    }

    private static func polymod(_ values: [UInt8]) -> UInt32 {
        let generator: [UInt32] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3]
        var check: UInt32 = 1
        for value in values {
            let top = check >> 25
            check = (check & 0x1ff_ffff) << 5 ^ UInt32(value)
            for i in 0..<5 where (top >> UInt32(i)) & 1 == 1 { check ^= generator[i] }
        }
        return check
    }

    private static func expand(_ hrp: [UInt8]) -> [UInt8] {
        hrp.map { $0 >> 5 } + [0] + hrp.map { $0 & 31 }
    }

    private static func makeChecksum(hrp: [UInt8], words: [UInt8]) -> [UInt8] {
        let mod = polymod(expand(hrp) + words + [0, 0, 0, 0, 0, 0]) ^ 1
        return (0..<6).map { UInt8(truncatingIfNeeded: (mod >> UInt32(5 * (5 - $0))) & 31) }
    }

    /// Regroups bits; without `pad`, leftover bits must be fewer than `from` and all zero.
    private static func convertBits(_ data: [UInt8], from: Int, to: Int, pad: Bool) -> [UInt8]? {
        var accumulator = 0
        var bits = 0
        var out: [UInt8] = []
        // One buffer from the start: a grown array leaves its earlier buffers (parts of a
        // secret key) to the heap as they were.
        out.reserveCapacity(data.count * from / to + 1)
        let maxValue = (1 << to) - 1
        for value in data {
            guard Int(value) >> from == 0 else { return nil }
            accumulator = (accumulator << from | Int(value)) & 0xffff
            bits += from
            while bits >= to {
                bits -= to
                out.append(UInt8((accumulator >> bits) & maxValue))
            }
        }
        if pad {
            if bits > 0 { out.append(UInt8((accumulator << (to - bits)) & maxValue)) }
        } else if bits >= from || (accumulator << (to - bits)) & maxValue != 0 {
            return nil
        }
        return out
    }
}
