import CCrypto

/// One-shot message digests through libcrypto, for callers outside the age format that need a
/// standard hash of bytes in memory: SHA-1 for name-based UUIDs (RFC 9562 version 5 requires it)
/// and for fingerprints that find changes (not for security), SHA-256 where a secure hash is wanted.
public enum MessageDigest {
    public static func sha1(_ bytes: [UInt8]) -> [UInt8] { bytes.withUnsafeBytes { digest($0, sha1Algorithm, length: 20) } }
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] { bytes.withUnsafeBytes { sha256($0) } }
    /// Of bytes in place (a `String`'s UTF-8), without copying them into an array first.
    public static func sha256(_ bytes: UnsafeRawBufferPointer) -> [UInt8] { digest(bytes, sha256Algorithm, length: 32) }

    // Fetched once: OpenSSL 3 otherwise looks the implementation up in its providers on every
    // call, which cost `diff` (a digest per row) more than the hashing. A fetched algorithm is
    // immutable and may be used from any thread.
    nonisolated(unsafe) static let sha1Algorithm = fetch("SHA1")
    nonisolated(unsafe) static let sha256Algorithm = fetch("SHA256")

    private static func fetch(_ name: String) -> OpaquePointer? {
        guard let algorithm = EVP_MD_fetch(nil, name, nil) else {
            fatalError("libcrypto has no \(name): \(LibCryptoFailure.lastReason())")
        }
        return algorithm
    }

    private static func digest(_ input: UnsafeRawBufferPointer, _ algorithm: OpaquePointer?, length: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        var written: UInt32 = 0
        let ok = out.withUnsafeMutableBytes { output in
            EVP_Digest(input.baseAddress, input.count, output.bindMemory(to: UInt8.self).baseAddress, &written, algorithm, nil)
        }
        // Only a libcrypto without its default provider fails here; nothing can go on without it.
        guard ok == 1, written == UInt32(length) else { fatalError("libcrypto's digest failed: \(LibCryptoFailure.lastReason())") }
        return out
    }
}

/// A digest computed over bytes handed in pieces (an attachment of any size, never held
/// whole); the same value as the one-shot digest of all of them.
public final class IncrementalDigest {
    private let context: OpaquePointer
    private let length: Int

    public static func sha1() -> IncrementalDigest { IncrementalDigest(MessageDigest.sha1Algorithm, length: 20) }
    public static func sha256() -> IncrementalDigest { IncrementalDigest(MessageDigest.sha256Algorithm, length: 32) }

    private init(_ algorithm: OpaquePointer?, length: Int) {
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, algorithm, nil) == 1 else {
            fatalError("libcrypto's digest failed: \(LibCryptoFailure.lastReason())")
        }
        self.context = context
        self.length = length
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        guard EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1 else {
            fatalError("libcrypto's digest failed: \(LibCryptoFailure.lastReason())")
        }
    }

    /// The digest; the object is spent.
    public func finish() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        var written: UInt32 = 0
        let ok = out.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &written) }
        guard ok == 1, written == UInt32(length) else { fatalError("libcrypto's digest failed: \(LibCryptoFailure.lastReason())") }
        return out
    }
}
