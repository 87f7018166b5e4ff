import CCrypto
import PulseSystem

/// ChaCha20-Poly1305 (RFC 7539) under one key, through one libcrypto cipher context reused for
/// every chunk of a file. Output is the ciphertext followed by the 16-byte tag. The context is
/// used by one thread at a time (`owner`): the file's sink or source hands it over.
final class ChaChaPoly {
    static let tagSize = 16
    static let nonceSize = 12

    /// The nonce of a payload chunk (age's STREAM): an 11-byte big-endian chunk counter, then
    /// 1 for the final chunk and 0 otherwise.
    static func streamNonce(chunk: UInt64, final: Bool) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: nonceSize)
        for i in 0..<8 { nonce[10 - i] = UInt8(truncatingIfNeeded: chunk >> UInt64(8 * i)) }
        nonce[11] = final ? 1 : 0
        return nonce
    }

    private let key: SecretBytes
    private let cipher: OpaquePointer
    private let context: OpaquePointer
    let owner = HandleOwner("a libcrypto ChaCha20-Poly1305 context")

    init(key: SecretBytes) throws(AgeError) {
        precondition(key.count == 32)
        guard let cipher = EVP_CIPHER_fetch(nil, "ChaCha20-Poly1305", nil) else {
            throw AgeError(.crypto, "libcrypto has no ChaCha20-Poly1305 (\(LibCrypto.openSSLReason()))")
        }
        guard let context = EVP_CIPHER_CTX_new() else {
            EVP_CIPHER_free(cipher)
            throw AgeError(.crypto, "libcrypto could not make a cipher context (\(LibCrypto.openSSLReason()))")
        }
        self.key = key
        self.cipher = cipher
        self.context = context
    }

    deinit {
        owner.check()
        EVP_CIPHER_CTX_free(context)  // also cleanses the key schedule
        EVP_CIPHER_free(cipher)
    }

    /// Seals `plaintext` into `output` (at least `plaintext.count + 16` bytes); returns the
    /// number of bytes written.
    func seal(nonce: [UInt8], _ plaintext: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(AgeError) -> Int {
        precondition(nonce.count == Self.nonceSize && output.count >= plaintext.count + Self.tagSize)
        try start(nonce: nonce, encrypting: true)
        let out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var written: Int32 = 0
        if plaintext.count > 0 {
            guard EVP_EncryptUpdate(context, out, &written, plaintext.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(plaintext.count)) == 1 else {
                throw AgeError(.crypto, "libcrypto's ChaCha20-Poly1305 failed to encrypt (\(LibCrypto.openSSLReason()))")
            }
        }
        var final: Int32 = 0
        guard EVP_EncryptFinal_ex(context, out + Int(written), &final) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(Self.tagSize), out + Int(written + final)) == 1
        else {
            throw AgeError(.crypto, "libcrypto's ChaCha20-Poly1305 failed to seal (\(LibCrypto.openSSLReason()))")
        }
        return Int(written + final) + Self.tagSize
    }

    /// Opens `sealed` (ciphertext then tag) into `output` (at least `sealed.count - 16` bytes);
    /// returns the plaintext length, or nil when the tag does not check: then `output` holds
    /// unauthenticated bytes the caller must not release.
    func open(nonce: [UInt8], _ sealed: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(AgeError) -> Int? {
        guard sealed.count >= Self.tagSize else { return nil }
        let length = sealed.count - Self.tagSize
        precondition(nonce.count == Self.nonceSize && output.count >= length)
        try start(nonce: nonce, encrypting: false)
        let input = sealed.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var written: Int32 = 0
        if length > 0 {
            guard EVP_DecryptUpdate(context, out, &written, input, Int32(length)) == 1 else {
                throw AgeError(.crypto, "libcrypto's ChaCha20-Poly1305 failed to decrypt (\(LibCrypto.openSSLReason()))")
            }
        }
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(Self.tagSize), UnsafeMutableRawPointer(mutating: input + length)) == 1 else {
            throw AgeError(.crypto, "libcrypto refused a Poly1305 tag (\(LibCrypto.openSSLReason()))")
        }
        var final: Int32 = 0
        guard EVP_DecryptFinal_ex(context, out + Int(written), &final) == 1 else {
            ERR_clear_error()
            return nil
        }
        return Int(written + final)
    }

    private func start(nonce: [UInt8], encrypting: Bool) throws(AgeError) {
        owner.check()
        let ok = key.withBytes { keyBytes in
            nonce.withUnsafeBufferPointer { nonceBytes in
                EVP_CipherInit_ex2(context, cipher, keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self), nonceBytes.baseAddress, encrypting ? 1 : 0, nil) == 1
            }
        }
        guard ok else { throw AgeError(.crypto, "libcrypto could not start ChaCha20-Poly1305 (\(LibCrypto.openSSLReason()))") }
    }
}
