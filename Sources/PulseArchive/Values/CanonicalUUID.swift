/// UUIDs in the app's dialect: read in either case, written upper-case 8-4-4-4-12.
public enum CanonicalUUID {
    /// The upper-case canonical form of a UUID string, or nil if it is not one.
    public static func canonical(_ text: String) -> String? {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBufferPointer { canonical(UnsafeBufferPointer($0)) }
    }

    /// The upper-case canonical form of UUID bytes (no quotes), or nil if they are not one.
    public static func canonical(_ s: UnsafeBufferPointer<UInt8>) -> String? {
        guard s.count == 36 else { return nil }
        return String(unsafeUninitializedCapacity: 36) { out in
            for i in 0..<36 {
                let c = s[i]
                if i == 8 || i == 13 || i == 18 || i == 23 {
                    guard c == 0x2D else { return 0 }
                    out[i] = c
                } else if (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) {
                    out[i] = c
                } else if c >= 0x61 && c <= 0x66 {
                    out[i] = c - 0x20
                } else {
                    return 0
                }
            }
            return 36
        }.nilIfEmpty
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

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
