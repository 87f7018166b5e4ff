import CCrypto

/// One-shot message digests through libcrypto, for callers outside the age format that need a
/// standard hash of bytes in memory: SHA-1 for name-based UUIDs (RFC 9562 version 5 requires it)
/// and for fingerprints that find changes (not for security), SHA-256 where a secure hash is wanted.
public enum MessageDigest {
    public static func sha1(_ bytes: [UInt8]) -> [UInt8] { digest(bytes, EVP_sha1(), length: 20) }
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] { digest(bytes, EVP_sha256(), length: 32) }

    private static func digest(_ bytes: [UInt8], _ algorithm: OpaquePointer?, length: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        var written: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            out.withUnsafeMutableBytes { output in
                EVP_Digest(input.baseAddress, input.count, output.bindMemory(to: UInt8.self).baseAddress, &written, algorithm, nil)
            }
        }
        // Only a libcrypto without its default provider fails here; nothing can go on without it.
        guard ok == 1, written == UInt32(length) else { fatalError("libcrypto's digest failed: \(LibCrypto.openSSLReason())") }
        return out
    }
}
