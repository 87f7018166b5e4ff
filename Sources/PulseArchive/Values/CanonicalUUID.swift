/// UUIDs in the app's dialect: read in either case, written upper-case 8-4-4-4-12.
public enum CanonicalUUID {
    /// The upper-case canonical form of a UUID string, or nil if it is not one.
    public static func canonical(_ text: String) -> String? {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBufferPointer { canonical(UnsafeBufferPointer($0)) }
    }

    /// Whether the bytes (no quotes) are a UUID, in either case: the reader's rule, which an
    /// export asks of a store's value before writing it, so no file it writes is refused.
    public static func isUUID(_ s: UnsafeBufferPointer<UInt8>) -> Bool {
        guard s.count == 36 else { return false }
        for i in 0..<36 {
            let c = s[i]
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard c == 0x2D else { return false }
            } else if !((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)) {
                return false
            }
        }
        return true
    }

    /// The upper-case canonical form of UUID bytes (no quotes), or nil if they are not one.
    public static func canonical(_ s: UnsafeBufferPointer<UInt8>) -> String? {
        guard isUUID(s) else { return nil }
        return String(unsafeUninitializedCapacity: 36) { out in
            for i in 0..<36 {
                let c = s[i]
                out[i] = c >= 0x61 ? c - 0x20 : c
            }
            return 36
        }
    }
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
