/// A text (a key, a path, a settings value) kept by its SHA-256, 32 bytes whatever its length,
/// where only equality matters: a set that must tell a repeated settings key, or a map from a
/// name to what must come back under it, then costs the count of names, never their bytes
/// again (200,000 settings keys of 1 KiB held 200 MB twice over in `verify`). Texts are equal
/// when their UTF-8 bytes are: no Unicode normalisation.
public struct TextDigest: Hashable, Sendable {
    private let words: (UInt64, UInt64, UInt64, UInt64)

    public init(_ text: String) {
        var text = text
        let bytes = text.withUTF8 { MessageDigest.sha256(UnsafeRawBufferPointer($0)) }
        func word(_ i: Int) -> UInt64 { bytes[i * 8 ..< i * 8 + 8].reduce(0) { $0 << 8 | UInt64($1) } }
        words = (word(0), word(1), word(2), word(3))
    }

    public static func == (a: TextDigest, b: TextDigest) -> Bool { a.words == b.words }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}
