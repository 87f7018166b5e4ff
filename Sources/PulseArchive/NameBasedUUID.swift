/// Name-based UUIDs (RFC 9562 version 5): SHA-1 of a namespace and a name. The Android port's
/// ids that are not UUIDs (`demo-device`, `history:hr:<ms>`) become these, so links survive.
public enum NameBasedUUID {
    /// The namespace of the Android port's ids (archive-format.md §8.2).
    public static let androidNamespace = "D7A96584-3528-5EFE-9E67-74379CF52F82"

    /// The version-5 UUID of `name`'s exact UTF-8 bytes in `namespace`, upper-case.
    public static func make(namespace: String, name: String) -> String {
        let namespaceBytes = bytes(ofCanonical: namespace)
        var digest = SHA1.hash(namespaceBytes + Array(name.utf8))
        digest[6] = digest[6] & 0x0F | 0x50
        digest[8] = digest[8] & 0x3F | 0x80
        return format(Array(digest[0..<16]))
    }

    static func bytes(ofCanonical uuid: String) -> [UInt8] {
        let hex = Array(uuid.utf8).filter { $0 != 0x2D }
        return stride(from: 0, to: hex.count, by: 2).map { i in UInt8(hexValue(hex[i]) << 4 | hexValue(hex[i + 1])) }
    }

    private static func hexValue(_ c: UInt8) -> UInt8 {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        default: return c - 0x61 + 10
        }
    }

    static func format(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for (i, byte) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { out.append(0x2D) }
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// SHA-1 (FIPS 180-4), for name-based UUIDs and for `verify`'s fingerprints of attachments and
/// documents: not for anything that needs a secure hash.
public enum SHA1 {
    public static func hash(_ message: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var padded = message
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        let bitLength = UInt64(message.count) * 8
        for shift in stride(from: 56, through: 0, by: -8) { padded.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        var w = [UInt32](repeating: 0, count: 80)
        for chunk in stride(from: 0, to: padded.count, by: 64) {
            for i in 0..<16 {
                let b = chunk + i * 4
                w[i] = UInt32(padded[b]) << 24 | UInt32(padded[b + 1]) << 16 | UInt32(padded[b + 2]) << 8 | UInt32(padded[b + 3])
            }
            for i in 16..<80 { w[i] = rotate(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1) }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32)
                switch i {
                case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
                }
                let temp = rotate(a, 5) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, rotate(b, 30), a, temp)
            }
            h[0] &+= a; h[1] &+= b; h[2] &+= c; h[3] &+= d; h[4] &+= e
        }
        return h.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> UInt32(24 - 8 * $0)) } }
    }

    private static func rotate(_ x: UInt32, _ n: UInt32) -> UInt32 { x << n | x >> (32 - n) }
}
