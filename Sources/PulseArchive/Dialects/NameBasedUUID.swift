import PulseDigest

/// Name-based UUIDs (RFC 9562 version 5): SHA-1 of a namespace and a name. The Android port's
/// ids that are not UUIDs (`demo-device`, `history:hr:<ms>`) become these, so links survive.
public enum NameBasedUUID {
    /// The namespace of the Android port's ids (archive-format.md §8.2).
    public static let androidNamespace = "D7A96584-3528-5EFE-9E67-74379CF52F82"

    /// The version-5 UUID of `name`'s exact UTF-8 bytes in `namespace`, upper-case.
    public static func make(namespace: String, name: String) -> String {
        make(namespaceBytes: bytes(ofCanonical: namespace), name: name)
    }

    /// `make` with the namespace already parsed (`bytes(ofCanonical:)`): for ids made by the
    /// hundred thousand (an imported Gadgetbridge history), where parsing it each time showed.
    public static func make(namespaceBytes: [UInt8], name: String) -> String {
        var digest = SHA1.hash(namespaceBytes + Array(name.utf8))
        digest[6] = digest[6] & 0x0F | 0x50
        digest[8] = digest[8] & 0x3F | 0x80
        return CanonicalUUID.string(bytes: digest[0..<16])
    }

    public static func bytes(ofCanonical uuid: String) -> [UInt8] {
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
}

