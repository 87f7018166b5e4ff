/// Bytes as upper-case hexadecimal text: the one formatter behind canonical UUIDs
/// (`CanonicalUUID.string(bytes:)`) and percent-encoding.
public enum HexText {
    private static let digits = Array("0123456789ABCDEF".utf8)

    /// Appends the two upper-case hexadecimal digits of `byte`.
    public static func append(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0xF)])
    }
}
