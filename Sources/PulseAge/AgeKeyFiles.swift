/// The age identity-file format: one `AGE-SECRET-KEY-1…` per line, `#` comments and empty
/// lines ignored, CRLF accepted; read as age reads it (`KeyFileLines`).
public enum AgeIdentityFile {
    /// - Parameters:
    ///   - bytes: the file's content.
    ///   - name: the file's name for messages.
    /// - Returns: the identities, at least one.
    /// - Throws: `.identityFileSyntax` naming the file and the line number (never the line's
    ///   content, which may be a secret with a typo); `.unsupportedIdentity` naming the type of
    ///   a post-quantum or plugin identity, or for an identity file that is itself encrypted.
    public static func parse(_ bytes: [UInt8], name: String) throws(AgeError) -> [AgeX25519Identity] {
        if AgeFormat.looksLikeAge(bytes) {
            throw AgeError(.unsupportedIdentity, "\(name) is an encrypted (age) identity file: decrypt it with age first; passphrase-protected identity files are not supported")
        }
        // An SSH private key (age reads those; this tool does not): said as such, not as a
        // line with blanks in it.
        if bytes.drop(while: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }).starts(with: Array("-----BEGIN ".utf8)) {
            throw AgeError(.unsupportedIdentity, "\(name) is an SSH or PEM private key (-----BEGIN …): SSH identities are not supported, only X25519 identities (AGE-SECRET-KEY-1…, as age-keygen makes them)")
        }
        var identities: [AgeX25519Identity] = []
        for (number, line, problem) in try KeyFileLines.lines(of: bytes, name: name, kind: .identityFileSyntax) {
            if let problem {
                throw AgeError(.identityFileSyntax, "\(name), line \(number): \(problem) (the line is not shown, as it may be a secret)")
            }
            do {
                identities.append(try AgeX25519Identity(bech32: line))
            } catch {
                switch error.kind {
                case .unsupportedIdentity: throw AgeError(.unsupportedIdentity, "\(name), line \(number): \(error.message)")
                case _ where AgeX25519Identity.hasLowerCase(line):
                    throw AgeError(.identityFileSyntax, "\(name), line \(number): \(AgeX25519Identity.lowerCaseMessage) (the line is not shown, as it is a secret)")
                default: throw AgeError(.identityFileSyntax, "\(name), line \(number): not an age X25519 identity (AGE-SECRET-KEY-1…); the line is not shown, as it may be a secret")
                }
            }
        }
        guard !identities.isEmpty else {
            throw AgeError(.identityFileSyntax, "\(name): no identity in the file (expected AGE-SECRET-KEY-1… lines)")
        }
        return identities
    }

    /// The file `age-keygen` writes for `identity`: the `# created:` and `# public key:`
    /// comment lines, then the secret key. The caller wipes the bytes when written.
    /// - Parameter created: the creation time as RFC 3339 (`2026-12-01T22:08:43+01:00`).
    public static func contents(of identity: AgeX25519Identity, created: String) -> [UInt8] {
        Array("# created: \(created)\n# public key: \(identity.recipient.bech32)\n".utf8) + Array(identity.bech32Encoded().utf8) + [0x0A]
    }
}

/// A recipients file: one `age1…` per line, `#` comments and empty lines ignored; read as
/// age reads it (`KeyFileLines`).
public enum AgeRecipientsFile {
    /// - Returns: the recipients, at least one.
    /// - Throws: `.recipientSyntax` naming the file and the line number (never the line).
    public static func parse(_ bytes: [UInt8], name: String) throws(AgeError) -> [AgeX25519Recipient] {
        var recipients: [AgeX25519Recipient] = []
        for (number, line, problem) in try KeyFileLines.lines(of: bytes, name: name, kind: .recipientSyntax) {
            // An SSH key's line has spaces of its own: said as an SSH key, below.
            if let problem, !line.lowercased().hasPrefix("ssh-") { throw AgeError(.recipientSyntax, "\(name), line \(number): \(problem)") }
            // A secret key or plugin identity on the line is refused, never shown, by the
            // recipient's own parse (`AgeX25519Recipient.init(bech32:)`).
            do {
                recipients.append(try AgeX25519Recipient(bech32: line))
            } catch {
                throw AgeError(.recipientSyntax, "\(name), line \(number): \(error.message)")
            }
        }
        guard !recipients.isEmpty else {
            throw AgeError(.recipientSyntax, "\(name): no recipient in the file (expected age1… lines)")
        }
        return recipients
    }
}

/// The lines of a key file that hold a key, as age reads them: numbered from 1, the CR of a
/// CRLF removed, empty lines and lines that start with `#` left out. A key line with a space
/// or tab anywhere (around the key, or text beside it) carries that `problem`: age refuses
/// such a line, and so must we, or a key file checked with this tool would fail with age when
/// a backup has to be restored.
enum KeyFileLines {
    /// The longest line age reads (its line scanner's 64 KiB buffer holds the line and its
    /// newline), comments included.
    static let longestLine = 65_535

    /// - Throws: `kind`, naming the file and the line, for a line longer than `longestLine`.
    static func lines(of bytes: [UInt8], name: String, kind: AgeErrorKind) throws(AgeError) -> [(number: Int, text: String, problem: String?)] {
        var result: [(Int, String, String?)] = []
        var number = 0
        for raw in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            guard raw.count <= longestLine else {
                throw AgeError(kind, "\(name), line \(number): longer than the \(longestLine) bytes age reads in a line, so age refuses the file; shorten it")
            }
            let line = raw.last == 0x0D ? raw.dropLast() : raw
            guard let first = line.first, first != UInt8(ascii: "#") else { continue }
            let problem = line.contains(where: isSpace)
                ? "spaces, tabs or other blank characters in the line (around the key, or text beside it): age refuses such a line too; the key goes alone on its line" : nil
            result.append((number, String(decoding: line, as: UTF8.self), problem))
        }
        return result
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0d || byte == 0x0b || byte == 0x0c
    }
}
