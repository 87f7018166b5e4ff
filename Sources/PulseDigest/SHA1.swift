/// SHA-1, for name-based UUIDs and for `verify`'s and `diff`'s fingerprints of rows,
/// attachments and documents: not for anything that needs a secure hash. libcrypto's, not ours.
public enum SHA1 {
    public static func hash(_ message: [UInt8]) -> [UInt8] { MessageDigest.sha1(message) }
}
