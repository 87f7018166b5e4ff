import Foundation
@testable import PulseAge
import Testing

/// Keys that wipe their secrets once the file keys they are for are derived (issue 24): the
/// identities' X25519 scalars and the caller's passphrase are not in memory for the rest of a
/// command.
@Suite struct AgeKeyWipeTests {
    @Test("an identity's scalar is zero once the file key is derived; the file opens again with the derived key; another file is refused, naming why")
    func identityWipedOnceFileKeyDerived() throws {
        let identity = try AgeX25519Identity.generate()
        let plaintext = AgeTest.pattern(100_000)
        let file = try AgeTest.encrypt(plaintext, recipients: [identity.recipient])
        nonisolated(unsafe) var forgotten = 0
        let keys = AgeKeys(identities: [identity]).wipingSecrets(afterOpening: 1) { forgotten += 1 }
        #expect(!identity.secret.isAllZero && !keys.secretsWiped)

        // Only the header is read: the scalar goes as soon as the file key is there.
        let source = try AgeDecryptingSource(source: AgeBytesSource(file, step: 1 << 20), name: "a.age", keys: keys)
        #expect(identity.secret.isAllZero, "the X25519 scalar is still in memory after the file key was derived")
        #expect(keys.secretsWiped && forgotten == 1)
        var first = [UInt8](repeating: 0, count: 10)
        #expect(try first.withUnsafeMutableBytes { try source.read(into: $0) } == 10 && first == Array(plaintext.prefix(10)))

        // A reader that opens the file again (to explain a failure) gets the key it derived.
        let again = AgeTest.decrypt(file, keys: keys)
        #expect(again.error == nil && again.plaintext == plaintext)
        #expect(forgotten == 1, "the passphrase's wipe runs once")

        let other = try AgeTest.encrypt(plaintext, recipients: [identity.recipient])
        let refused = AgeTest.decrypt(other, keys: keys, name: "other.age")
        #expect(refused.error?.kind == .noIdentityMatches && refused.error?.message.contains("were wiped") == true, "\(String(describing: refused.error))")
    }

    @Test("keys for two files (diff) wipe after the second file key, not the first")
    func wipedAfterTheLastFile() throws {
        let identity = try AgeX25519Identity.generate()
        let a = try AgeTest.encrypt([1, 2, 3], recipients: [identity.recipient])
        let b = try AgeTest.encrypt([4, 5], recipients: [identity.recipient])
        let keys = AgeKeys(identities: [identity]).wipingSecrets(afterOpening: 2) {}
        #expect(AgeTest.decrypt(a, keys: keys).plaintext == [1, 2, 3])
        #expect(!identity.secret.isAllZero && !keys.secretsWiped)
        #expect(AgeTest.decrypt(b, keys: keys).plaintext == [4, 5])
        #expect(identity.secret.isAllZero && keys.secretsWiped)
    }

    @Test("a passphrase: the keys call the caller's wipe once the file key is derived, and the copy they were given is zeroed")
    func passphraseForgotten() throws {
        let file = try AgeTest.encrypt([7, 8, 9], passphrase: "tr0ub4dor&3", workFactor: 10)
        let held = SecretBytes(count: 11)
        Array("tr0ub4dor&3".utf8).withUnsafeBytes { bytes in held.withMutableBytes { $0.copyMemory(from: bytes) } }
        let keys = AgeKeys(passphrase: { held.withBytes { Array($0) } }).wipingSecrets(afterOpening: 1) { held.wipe() }
        #expect(AgeTest.decrypt(file, keys: keys).plaintext == [7, 8, 9])
        #expect(held.isAllZero && keys.secretsWiped)
        // The file opens again without the passphrase.
        #expect(AgeTest.decrypt(file, keys: keys).plaintext == [7, 8, 9])
    }

    @Test("keys that are not asked to wipe keep their identities (a library caller may open many files)")
    func keptByDefault() throws {
        let identity = try AgeX25519Identity.generate()
        let keys = AgeKeys(identities: [identity])
        for n in 0..<3 {
            let file = try AgeTest.encrypt([UInt8(n)], recipients: [identity.recipient])
            #expect(AgeTest.decrypt(file, keys: keys).plaintext == [UInt8(n)])
        }
        #expect(!identity.secret.isAllZero && !keys.secretsWiped)
    }
}
