import CCrypto

/// SHA-256 through libcrypto, fed in pieces: for tests and callers that fingerprint a stream
/// (the age test vectors give the SHA-256 of the plaintext).
public final class SHA256 {
    private let context: OpaquePointer

    public init() {
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex2(context, EVP_sha256(), nil) == 1 else {
            fatalError("libcrypto could not start SHA-256: \(LibCryptoFailure.lastReason())")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        guard EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1 else {
            fatalError("libcrypto's SHA-256 failed: \(LibCryptoFailure.lastReason())")
        }
    }

    public func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// The digest of everything fed so far; the hasher is spent afterwards.
    public func finish() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &out, &length) == 1, length == 32 else {
            fatalError("libcrypto's SHA-256 failed: \(LibCryptoFailure.lastReason())")
        }
        return out
    }

    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        let hasher = SHA256()
        hasher.update(bytes)
        return hasher.finish()
    }
}
