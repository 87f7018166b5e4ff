/// Standard base64 (RFC 4648 §4, padded), as the app writes attachments and files.
///
/// Our own codec because the values are the largest an archive holds: Foundation's decodes
/// from `Data` into `Data` and encodes into a `String`, three extra copies of up to
/// `ArchiveLimits.maxStringBytes` each. Decoding is as strict as Foundation's (padding required,
/// no whitespace), except that `====` is refused rather than read as one zero byte; bits after
/// the last byte are ignored, as there.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let padding = UInt8(ascii: "=")
    /// The value of each byte in the alphabet, 0xFF for the others.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        return table
    }()

    /// The bytes `text` encodes, or nil when it is not padded standard base64.
    public static func decode(_ text: [UInt8]) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        guard !text.isEmpty else { return [] }
        let padded = text[text.count - 1] == padding ? (text[text.count - 2] == padding ? 2 : 1) : 0
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3 - padded)
        let values = Self.values
        return text.withUnsafeBufferPointer { input -> [UInt8]? in
            var i = 0
            while i < input.count {
                let isLast = i + 4 == input.count
                let a = values[Int(input[i])], b = values[Int(input[i + 1])]
                let c = isLast && padded == 2 ? 0 : values[Int(input[i + 2])]
                let d = isLast && padded >= 1 ? 0 : values[Int(input[i + 3])]
                guard a < 64, b < 64, c < 64, d < 64 else { return nil }
                out.append(a << 2 | b >> 4)
                if !(isLast && padded == 2) { out.append(b << 4 | c >> 2) }
                if !(isLast && padded >= 1) { out.append(c << 6 | d) }
                i += 4
            }
            return out
        }
    }

    /// Appends the padded base64 of `bytes` to `out`.
    public static func encode(_ bytes: [UInt8], appendingTo out: inout [UInt8]) {
        let alphabet = Self.alphabet
        out.reserveCapacity(out.count + (bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out.append(alphabet[Int(n >> 18)]); out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)]); out.append(alphabet[Int(n & 63)])
            i += 3
        }
        switch bytes.count - i {
        case 1:
            let n = UInt32(bytes[i]) << 16
            out += [alphabet[Int(n >> 18)], alphabet[Int(n >> 12 & 63)], padding, padding]
        case 2:
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out += [alphabet[Int(n >> 18)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], padding]
        default:
            break
        }
    }
}
