/// SHA-256 through libcrypto, fed in pieces: for tests and callers that fingerprint a stream
/// (the age test vectors give the SHA-256 of the plaintext).
public final class SHA256 {
    private let digest = IncrementalDigest.sha256()

    public init() {}

    public func update(_ bytes: UnsafeRawBufferPointer) { digest.update(bytes) }

    public func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// The digest of everything fed so far; the hasher is spent afterwards.
    public func finish() -> [UInt8] { digest.finish() }

    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        let hasher = SHA256()
        hasher.update(bytes)
        return hasher.finish()
    }
}
