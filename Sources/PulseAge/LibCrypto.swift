import CCrypto
import PulseDigest

/// The primitives of the age format, each one call into libcrypto: nothing here is computed by
/// us. Every C handle is created and freed inside the call that needs it, except the cipher
/// context, which `ChaChaPoly` owns.
enum LibCrypto {
    /// Fills `bytes` from the system's CSPRNG.
    static func randomBytes(_ bytes: UnsafeMutableRawBufferPointer) throws(AgeError) {
        guard bytes.count > 0 else { return }
        guard RAND_bytes(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(bytes.count)) == 1 else {
            throw AgeError(.crypto, "the system's random number generator failed (\(openSSLReason()))")
        }
    }

    /// X25519(secret, basepoint): the public key of a 32-byte secret.
    static func x25519PublicKey(secret: SecretBytes) throws(AgeError) -> [UInt8] {
        let key = try x25519PrivateKey(secret)
        defer { EVP_PKEY_free(key) }
        var out = [UInt8](repeating: 0, count: 32)
        var length = 32
        guard EVP_PKEY_get_raw_public_key(key, &out, &length) == 1, length == 32 else {
            throw AgeError(.crypto, "libcrypto could not compute an X25519 public key (\(openSSLReason()))")
        }
        return out
    }

    /// X25519(secret, peer): nil when the result is all zeros (the peer is a low-order point),
    /// which the format treats as an error.
    static func x25519(secret: SecretBytes, peer: [UInt8]) throws(AgeError) -> SecretBytes? {
        guard peer.count == 32 else { return nil }
        let key = try x25519PrivateKey(secret)
        defer { EVP_PKEY_free(key) }
        guard let peerKey = peer.withUnsafeBufferPointer({ EVP_PKEY_new_raw_public_key_ex(nil, "X25519", nil, $0.baseAddress, 32) }) else {
            throw AgeError(.crypto, "libcrypto refused an X25519 public key (\(openSSLReason()))")
        }
        defer { EVP_PKEY_free(peerKey) }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else {
            throw AgeError(.crypto, "libcrypto could not make an X25519 context (\(openSSLReason()))")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer(context, peerKey) == 1 else {
            throw AgeError(.crypto, "libcrypto could not start an X25519 exchange (\(openSSLReason()))")
        }
        let shared = SecretBytes(count: 32)
        var length = 32
        let derived = shared.withMutableBytes { EVP_PKEY_derive(context, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), &length) }
        // OpenSSL refuses an all-zero result itself; the second check does not depend on it.
        guard derived == 1, length == 32, !shared.isAllZero else {
            ERR_clear_error()
            return nil
        }
        return shared
    }

    private static func x25519PrivateKey(_ secret: SecretBytes) throws(AgeError) -> OpaquePointer {
        guard secret.count == 32,
              let key = secret.withBytes({ EVP_PKEY_new_raw_private_key_ex(nil, "X25519", nil, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), 32) })
        else {
            throw AgeError(.crypto, "libcrypto refused an X25519 secret key (\(openSSLReason()))")
        }
        return key
    }

    /// HKDF-SHA-256 (RFC 5869) with a 32-byte output. An empty salt is passed as no salt,
    /// which RFC 5869 defines as the same thing.
    static func hkdfSHA256(key: UnsafeRawBufferPointer, salt: [UInt8], info: StaticString) throws(AgeError) -> SecretBytes {
        guard let kdf = EVP_KDF_fetch(nil, "HKDF", nil) else {
            throw AgeError(.crypto, "libcrypto has no HKDF (\(openSSLReason()))")
        }
        defer { EVP_KDF_free(kdf) }
        guard let context = EVP_KDF_CTX_new(kdf) else {
            throw AgeError(.crypto, "libcrypto could not make an HKDF context (\(openSSLReason()))")
        }
        defer { EVP_KDF_CTX_free(context) }
        let out = SecretBytes(count: 32)
        let ok = salt.withUnsafeBytes { saltBytes in
            out.withMutableBytes { outBytes in
                var params = [
                    OSSL_PARAM_construct_utf8_string(cString("digest"), mutableCString("SHA256"), 0),
                    OSSL_PARAM_construct_octet_string(cString("key"), UnsafeMutableRawPointer(mutating: key.baseAddress), key.count),
                    OSSL_PARAM_construct_octet_string(cString("info"), UnsafeMutableRawPointer(mutating: info.utf8Start), info.utf8CodeUnitCount),
                ]
                if salt.count > 0 {
                    params.append(OSSL_PARAM_construct_octet_string(cString("salt"), UnsafeMutableRawPointer(mutating: saltBytes.baseAddress), salt.count))
                }
                params.append(OSSL_PARAM_construct_end())
                return EVP_KDF_derive(context, outBytes.baseAddress!.assumingMemoryBound(to: UInt8.self), 32, &params) == 1
            }
        }
        guard ok else { throw AgeError(.crypto, "libcrypto's HKDF failed (\(openSSLReason()))") }
        return out
    }

    /// HMAC-SHA-256 of `data` under `key`.
    static func hmacSHA256(key: SecretBytes, data: [UInt8]) throws(AgeError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length = 0
        let result = key.withBytes { keyBytes in
            data.withUnsafeBytes { dataBytes in
                EVP_Q_mac(nil, "HMAC", nil, "SHA256", nil, keyBytes.baseAddress, keyBytes.count,
                          dataBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), dataBytes.count, &out, 32, &length)
            }
        }
        guard result != nil, length == 32 else { throw AgeError(.crypto, "libcrypto's HMAC-SHA-256 failed (\(openSSLReason()))") }
        return out
    }

    /// scrypt (RFC 7914) with N = 2^logN, r = 8, p = 1 and a 32-byte output. The caller has
    /// checked the work factor; the memory allowed is what these parameters need.
    static func scrypt(passphrase: [UInt8], salt: [UInt8], logN: Int) throws(AgeError) -> SecretBytes {
        precondition(logN > 0 && logN <= AgeFormat.maximumWorkFactor)
        let n = UInt64(1) << UInt64(logN)
        let maxMemory = 128 * 8 * (n + 2) + (1 << 20)
        let out = SecretBytes(count: 32)
        let ok = passphrase.withUnsafeBytes { pass in
            salt.withUnsafeBufferPointer { saltBytes in
                out.withMutableBytes { outBytes in
                    EVP_PBE_scrypt(pass.baseAddress.map { $0.assumingMemoryBound(to: CChar.self) } ?? cString(""), pass.count,
                                   saltBytes.baseAddress, saltBytes.count, n, 8, 1, maxMemory,
                                   outBytes.baseAddress!.assumingMemoryBound(to: UInt8.self), 32) == 1
                }
            }
        }
        guard ok else { throw AgeError(.crypto, "libcrypto's scrypt failed at work factor \(logN), which needs \((128 * 8 * n) >> 20) MiB of memory (\(openSSLReason()))") }
        return out
    }

    /// A pointer to a static C string, valid for the life of the program (OSSL_PARAM keeps it).
    private static func cString(_ string: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(string.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    private static func mutableCString(_ string: StaticString) -> UnsafeMutablePointer<CChar> {
        UnsafeMutablePointer(mutating: cString(string))
    }

    /// libcrypto's last error, for a message: never contains key material.
    static func openSSLReason() -> String { LibCryptoFailure.lastReason() }
}
