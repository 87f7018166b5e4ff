import PulseSystem

/// Why an age file could not be read or written, or a key or key file could not be used.
/// Messages name the file (and the line, chunk or offset) but never contain key material, a
/// passphrase, or the content of a line of an identity file.
public typealias AgeError = KindedError<AgeErrorKind>

public enum AgeErrorKind: String, Sendable {
    /// The file's only passphrase (scrypt) stanza did not open with the passphrase given.
    case wrongPassphrase
    /// No identity given opens any stanza of the header; the message names the stanza types
    /// the header has. Also raised when the file needs a passphrase and none was given, or an
    /// identity and only a passphrase was given.
    case noIdentityMatches
    /// The header does not parse: a bad intro or stanza line, non-canonical base64, a body
    /// of the wrong length, a low-order X25519 share, an scrypt stanza beside another one, a
    /// file that ends inside the header or before the payload nonce, a header over the limit.
    case damagedHeader
    /// The header MAC does not match the header: the header was changed, or the file key
    /// unwrapped is not the one it was written with.
    case headerMAC
    /// A payload chunk fails its authentication tag (damaged or forged), is empty where it
    /// may not be, or a chunk follows the final one.
    case badChunk
    /// The file ends without a final chunk: it was cut short.
    case truncated
    /// Bytes follow the final chunk.
    case trailingData
    /// An identity of a type this version does not implement (post-quantum
    /// `AGE-SECRET-KEY-PQ-1…`, plugins `AGE-PLUGIN-…`): the message names the type.
    case unsupportedIdentity
    /// An identity file (or an identity string) does not parse: the message names the file and
    /// the line number, never the line.
    case identityFileSyntax
    /// A recipient (`age1…`) or a line of a recipients file does not parse.
    case recipientSyntax
    /// More recipients than a header readers accept can hold (`AgeFormat.maximumX25519Recipients`):
    /// refused by the writer before any work.
    case tooManyRecipients
    /// An scrypt stanza asks for a work factor above 22: refused before any scrypt work.
    case workFactorTooLarge
    /// The ASCII armor (`-----BEGIN AGE ENCRYPTED FILE-----`) is malformed.
    case armor
    /// The file starts `age-encryption.org/` but with a version other than `v1`.
    case unsupportedVersion
    /// Reading or writing the underlying stream failed.
    case io
    /// libcrypto refused an operation or random bytes could not be had (should not happen).
    case crypto
}
