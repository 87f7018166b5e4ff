import CCrypto

/// libcrypto's reason for its last failure, for a message (it never contains key material).
/// The digests here trap with it (a digest fails only when libcrypto has no default provider,
/// and nothing can go on without it); the age module words its errors with it.
public enum LibCryptoFailure {
    public static func lastReason() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return "no reason given" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
