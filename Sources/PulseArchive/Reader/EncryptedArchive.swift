import PulseAge
import PulseSystem

/// An archive encrypted with age, opened for the reader: the decrypted stream, whose failures
/// become the codec's `ArchiveError(.decryption)`, or, without keys, a refusal that says what
/// the header holds.
enum EncryptedArchive {
    /// - Parameter source: the age file from its first byte.
    /// - Parameter keys: nil, or keys none of which fit the header's stanzas (a passphrase for a
    ///   file of public keys), refuse the file with what its header says, before any work.
    static func open(_ source: ByteSource, name: String, keys: AgeKeys?) throws(ArchiveError) -> ByteSource {
        // The header is read twice: once to see which keys it needs, then by the decryption.
        let replay = ReplaySource(source)
        replay.record()
        let header: AgeHeaderSummary
        do {
            header = try AgeFormat.readHeaderSummary(from: replay, name: name)
        } catch {
            throw converted(error)
        }
        replay.replay()
        let needsPassphrase = header.stanzaTypes.contains("scrypt")
        // Whatever keys were given: a header no key can open is damaged, not awaiting a
        // passphrase (age refuses it the same way).
        if needsPassphrase && header.stanzaCount > 1 {
            throw ArchiveError(.decryption, "\(name): the age header is damaged: an scrypt (passphrase) stanza must be the only stanza, and there are \(header.stanzaCount)")
        }
        guard let keys, needsPassphrase ? keys.passphrase != nil : !keys.identities.isEmpty else {
            let types = header.stanzaTypes.joined(separator: ", ")
            throw ArchiveError(.encrypted, """
                \(name) is encrypted with age (\(header.armored ? "ASCII-armored, " : "")\(header.stanzaCount) \
                recipient stanza\(header.stanzaCount == 1 ? "" : "s"): \(types)); nothing in it can be read without \
                \(needsPassphrase ? "the passphrase" : "an identity") it was encrypted \(needsPassphrase ? "with" : "to")
                """)
        }
        do {
            return DecryptedSource(try AgeDecryptingSource(source: replay, name: name, keys: keys))
        } catch {
            throw converted(error)
        }
    }

    static func converted(_ error: AgeError) -> ArchiveError {
        switch error.kind {
        case .io: ArchiveError(.io, error.message)
        case .noIdentityMatches, .wrongPassphrase: ArchiveError(.keysDoNotOpen, error.message)
        // libcrypto without memory (scrypt's work factor 18 needs 256 MiB), not a fault of the file.
        case .crypto: ArchiveError(.machineFailure, error.message)
        default: ArchiveError(.decryption, error.message)
        }
    }

    /// The plaintext, with the decryption's errors as the codec's.
    private final class DecryptedSource: ByteSource {
        private let base: AgeDecryptingSource

        init(_ base: AgeDecryptingSource) { self.base = base }

        var handleOwners: [HandleOwner] { base.handleOwners }

        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            do {
                return try base.read(into: buffer)
            } catch let error as AgeError {
                throw EncryptedArchive.converted(error)
            }
        }
    }
}
