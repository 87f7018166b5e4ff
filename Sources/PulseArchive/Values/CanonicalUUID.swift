/// UUIDs in the app's dialect: read in either case, written upper-case 8-4-4-4-12.
public enum CanonicalUUID {
    /// The upper-case canonical form of a UUID string, or nil if it is not one.
    public static func canonical(_ text: String) -> String? {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBufferPointer { canonical(UnsafeBufferPointer($0)) }
    }

    /// Whether the bytes (no quotes) are a UUID, in either case: the reader's rule, which an
    /// export asks of every UUID a store holds before writing it, so no file it writes is
    /// refused. Eight bytes at a time (an export asks it of millions of values): five words
    /// cover the 36 bytes, each with the places its hex digits and its hyphens hold.
    public static func isUUID(_ s: UnsafeBufferPointer<UInt8>) -> Bool {
        guard s.count == 36, let base = s.baseAddress else { return false }
        func word(at offset: Int) -> UInt64 { UInt64(littleEndian: UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self)) }
        return holds(word(at: 0), hex: 0xFF_FF_FF_FF_FF_FF_FF_FF)
            && holds(word(at: 8), hex: 0xFF_FF_00_FF_FF_FF_FF_00)
            && holds(word(at: 16), hex: 0x00_FF_FF_FF_FF_00_FF_FF)
            && holds(word(at: 24), hex: 0xFF_FF_FF_FF_FF_FF_FF_FF)
            && holds(word(at: 28), hex: 0xFF_FF_FF_FF_FF_FF_FF_FF)
    }

    /// Whether a UUID (one `isUUID` took) has a lower-case letter: letters have 0x40 set, and
    /// lower-case ones 0x20 too; digits and hyphens never 0x40.
    public static func hasLowerCase(_ s: UnsafeBufferPointer<UInt8>) -> Bool {
        guard s.count == 36, let base = s.baseAddress else { return false }
        func lowerCase(at offset: Int) -> UInt64 {
            let word = UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self)
            return word & (word << 1) & 0x4040_4040_4040_4040
        }
        return lowerCase(at: 0) | lowerCase(at: 8) | lowerCase(at: 16) | lowerCase(at: 24) | lowerCase(at: 28) != 0
    }

    /// Whether the bytes of `word` under `hex` (0xFF per byte) are hex digits of either case,
    /// and the others hyphens.
    @inline(__always)
    private static func holds(_ word: UInt64, hex: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let hyphens = ~hex
        guard (word ^ (ones &* 0x2D)) & hyphens == 0, word & highs == 0 else { return false }
        /// A high bit in each byte within lower...upper (every byte is below 0x80, so no sum
        /// carries into the next byte).
        func within(_ x: UInt64, _ lower: UInt64, _ upper: UInt64) -> UInt64 {
            (x &+ ones &* (0x80 - lower)) & ~(x &+ ones &* (0x7F - upper)) & highs
        }
        // A-F become a-f with 0x20 set; digits are asked of the bytes as they are (0x10-0x19
        // would become digits).
        let digits = within(word, 0x30, 0x39) | within(word | ones &* 0x20, 0x61, 0x66)
        return digits & hex & highs == hex & highs
    }

    /// The upper-case canonical form of UUID bytes (no quotes), or nil if they are not one.
    public static func canonical(_ s: UnsafeBufferPointer<UInt8>) -> String? {
        guard isUUID(s) else { return nil }
        return String(unsafeUninitializedCapacity: 36) { out in
            for i in 0..<36 { out[i] = upperCased(s[i]) }
            return 36
        }
    }

    /// Appends a UUID (one `isUUID` took) upper-case, as the dialect writes it: the bytes as
    /// they are, and only when one is a lower-case letter, that letter raised.
    static func appendUpperCased(_ s: UnsafeBufferPointer<UInt8>, to out: inout ByteBuffer) {
        let start = out.count
        out.append(s)
        guard hasLowerCase(s) else { return }
        out.withMutableBytes(from: start) { text in
            for i in text.indices { text[i] = upperCased(text[i]) }
        }
    }

    /// A byte of a UUID upper-case: a-f are its only lower-case letters.
    @inline(__always)
    private static func upperCased(_ c: UInt8) -> UInt8 { c >= 0x61 ? c - 0x20 : c }
}

extension CanonicalUUID {
    /// 16 bytes as the canonical form: upper-case, hyphens after bytes 4, 6, 8 and 10.
    public static func string(bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (i, byte) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { out.append(0x2D) }
            HexText.append(byte, to: &out)
        }
        return String(decoding: out, as: UTF8.self)
    }
}
