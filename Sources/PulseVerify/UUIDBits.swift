import PulseArchive

/// Canonical (upper-case, hyphenated) UUID text as 128 bits and back.
enum UUIDBits {
    static func parse(_ text: String) -> (UInt64, UInt64)? {
        guard text.utf8.count == 36 else { return nil }
        var text = text
        return text.withUTF8 { s -> (UInt64, UInt64)? in
            var words: (UInt64, UInt64) = (0, 0)
            var bad: UInt8 = 0
            var i = 0
            for w in 0..<2 {
                var word: UInt64 = 0
                for _ in 0..<16 {
                    if i == 8 || i == 13 || i == 18 || i == 23 {
                        bad |= s[i] ^ 0x2D
                        i += 1
                    }
                    let c = s[i]
                    let digit = c &- 0x30, letter = c &- 0x41
                    let nibble: UInt8 = digit < 10 ? digit : letter < 6 ? letter + 10 : 0xFF
                    bad |= nibble & 0xF0
                    word = word << 4 | UInt64(nibble & 0x0F)
                    i += 1
                }
                if w == 0 { words.0 = word } else { words.1 = word }
            }
            return bad == 0 ? words : nil
        }
    }

    static func format(_ head: UInt64, _ tail: UInt64) -> String {
        CanonicalUUID.string(bytes: [head, tail].flatMap { word in (0..<8).map { UInt8(truncatingIfNeeded: word >> (56 - 8 * UInt64($0))) } })
    }
}
