/// ULIDs as the document store uses them: 26 characters of Crockford base32, a 48-bit
/// millisecond time then 80 random bits. Parsed in either case, written upper-case.
public struct ULID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 128 bits, big-endian.
    public let bytes: [UInt8]

    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
    private static let values: [UInt8: UInt8] = {
        var table: [UInt8: UInt8] = [:]
        for (value, character) in alphabet.enumerated() {
            table[character] = UInt8(value)
            if character >= 0x41 && character <= 0x5A { table[character + 0x20] = UInt8(value) }
        }
        return table
    }()

    public init(bytes: [UInt8]) {
        precondition(bytes.count == 16, "a ULID is 16 bytes")
        self.bytes = bytes
    }

    /// Parses a ULID; nil when it is not 26 base32 characters or overflows 128 bits (a first
    /// character above `7`).
    public init?(_ text: String) {
        let characters = Array(text.utf8)
        guard characters.count == 26 else { return nil }
        var digits: [UInt8] = []
        for c in characters {
            guard let value = Self.values[c] else { return nil }
            digits.append(value)
        }
        guard digits[0] <= 7 else { return nil }
        // 26 × 5 = 130 bits, the top two always zero: shift them in from the left.
        var result = [UInt8](repeating: 0, count: 16)
        var bitPosition = 0  // bits of the 130-bit number consumed, from the top
        for digit in digits {
            for bit in stride(from: 4, through: 0, by: -1) {
                let target = bitPosition - 2  // the 128-bit index of this bit
                if target >= 0, (digit >> UInt8(bit)) & 1 == 1 {
                    result[target / 8] |= 0x80 >> UInt8(target % 8)
                }
                bitPosition += 1
            }
        }
        self.bytes = result
    }

    /// The upper-case form of a ULID string, or nil.
    public static func canonical(_ text: String) -> String? { ULID(text)?.description }

    public var description: String {
        var out: [UInt8] = []
        for index in 0..<26 {
            var digit: UInt8 = 0
            for bit in 0..<5 {
                let target = index * 5 + bit - 2
                let set = target >= 0 && (bytes[target / 8] & (0x80 >> UInt8(target % 8))) != 0
                digit = digit << 1 | (set ? 1 : 0)
            }
            out.append(Self.alphabet[Int(digit)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Milliseconds since 1970.
    public var timestamp: Int64 {
        bytes[0..<6].reduce(0) { $0 << 8 | Int64($1) }
    }

    public static func < (a: ULID, b: ULID) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }
}
