import CCrypto

/// Key material in one heap buffer that Swift never copies: the file key, wrap keys, payload
/// keys, X25519 secrets. The buffer is wiped with `OPENSSL_cleanse` when the last reference
/// goes, or before, by `wipe()`, when what it opens has been opened. Immutable once filled
/// (but for that wipe), hence safe to share between threads.
package final class SecretBytes: @unchecked Sendable {
    private let buffer: UnsafeMutableRawBufferPointer

    /// `count` zero bytes, for a primitive to fill through `withMutableBytes` before sharing.
    init(count: Int) {
        buffer = .allocate(byteCount: Swift.max(count, 1), alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        self.count = count
    }

    package convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count)
        if let base = bytes.baseAddress, bytes.count > 0 { buffer.baseAddress!.copyMemory(from: base, byteCount: bytes.count) }
    }

    /// `count` bytes from the system's CSPRNG.
    static func random(count: Int) throws(AgeError) -> SecretBytes {
        let secret = SecretBytes(count: count)
        try secret.withMutableBytes { (bytes) throws(AgeError) in try LibCrypto.randomBytes(bytes) }
        return secret
    }

    package let count: Int

    package func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    func withMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
    }

    /// Zeroes the bytes now, for good: every holder of this buffer sees zeros from then on.
    package func wipe() {
        OPENSSL_cleanse(buffer.baseAddress, buffer.count)
    }

    /// True when every byte is zero (an X25519 shared secret from a low-order point, a wiped secret).
    package var isAllZero: Bool {
        withBytes { bytes in bytes.reduce(0) { $0 | $1 } == 0 }
    }

    deinit {
        OPENSSL_cleanse(buffer.baseAddress, buffer.count)
        buffer.deallocate()
    }
}
