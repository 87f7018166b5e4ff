import CCrypto

/// libcrypto's reason for its last failure, for the messages of the traps above: a digest fails
/// only when libcrypto has no default provider, and nothing can go on without it.
enum DigestFailure {
    static func reason() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return "no reason given" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
