import Foundation
@testable import PulseAge
@testable import PulseTestSupport
import Testing

/// The age module beyond the test vectors: round trips, keys and key files, the refusals.
@Suite struct AgeTests {
    static let sizes = [0, 1, 65_535, 65_536, 65_537, 3 * 65_536]
    static let testkitIdentity = "AGE-SECRET-KEY-1EGTZVFFV20835NWYV6270LXYVK2VKNX2MMDKWYKLMGR48UAWX40Q2P2LM0"

    /// The size of an age payload: nonce, then each chunk and its tag (one empty chunk at least).
    static func payloadSize(_ plaintext: Int) -> Int {
        let chunks = max(1, (plaintext + 65_535) / 65_536)
        return 16 + plaintext + 16 * chunks
    }

    static func headerLength(_ file: [UInt8]) -> Int {
        let marker = Array("\n--- ".utf8)
        let start = (0...(file.count - marker.count)).first { Array(file[$0..<$0 + marker.count]) == marker }!
        return file[start...].firstIndex(of: 0x0a, after: 1)! + 1
    }

    @Test func x25519RoundTripsAcrossSizesForOneAndTwoRecipients() throws {
        let alice = try AgeX25519Identity.generate()
        let bob = try AgeX25519Identity.generate()
        let stranger = try AgeX25519Identity.generate()
        for size in Self.sizes {
            let plaintext = AgeTest.pattern(size)
            let one = try AgeTest.encrypt(plaintext, recipients: [alice.recipient], writeSize: 40_000)
            #expect(one.starts(with: Array("age-encryption.org/v1\n-> X25519 ".utf8)))
            #expect(one.count == Self.headerLength(one) + Self.payloadSize(size), "size \(size)")
            let opened = AgeTest.decrypt(one, keys: AgeKeys(identities: [alice]))
            #expect(opened.error == nil && AgeTest.same(opened.plaintext, plaintext), "size \(size): \(String(describing: opened.error))")

            let two = try AgeTest.encrypt(plaintext, recipients: [alice.recipient, bob.recipient])
            for identity in [alice, bob] {
                let result = AgeTest.decrypt(two, keys: AgeKeys(identities: [stranger, identity]), readSize: 65_536)
                #expect(result.error == nil && AgeTest.same(result.plaintext, plaintext), "size \(size), two recipients")
            }
            let refused = AgeTest.decrypt(two, keys: AgeKeys(identities: [stranger]), name: "two.age")
            #expect(refused.error?.kind == .noIdentityMatches)
            #expect(refused.error?.message.contains("X25519 ×2") == true, "\(String(describing: refused.error))")
            #expect(refused.plaintext.isEmpty)
        }
    }

    @Test func passphraseRoundTripsAcrossSizes() throws {
        for size in Self.sizes {
            let plaintext = AgeTest.pattern(size)
            let file = try AgeTest.encrypt(plaintext, passphrase: "correct horse", workFactor: 10)
            #expect(file.starts(with: Array("age-encryption.org/v1\n-> scrypt ".utf8)))
            var asked = 0
            let result = AgeTest.decrypt(file, keys: AgeKeys(passphrase: { asked += 1; return Array("correct horse".utf8) }))
            #expect(result.error == nil && AgeTest.same(result.plaintext, plaintext), "size \(size)")
            #expect(asked == 1)
        }
    }

    @Test func passphraseDefaultsToWorkFactor18AndRefusesWrongOrMissingKeys() throws {
        let sink = AgeBytesSink()
        let encryptor = try AgeEncryptingSink(output: sink, passphrase: Array("tr0ub4dor&3".utf8))
        try Array("hello".utf8).withUnsafeBytes { try encryptor.write($0) }
        try encryptor.finish()
        #expect(sink.finished)
        let firstLines = String(decoding: sink.bytes.prefix(60), as: UTF8.self).split(separator: "\n")
        #expect(firstLines[1].hasSuffix(" 18"), "\(firstLines[1])")

        let right = AgeTest.decrypt(sink.bytes, keys: AgeKeys(passphrase: { Array("tr0ub4dor&3".utf8) }))
        #expect(right.plaintext == Array("hello".utf8) && right.error == nil)
        let wrong = AgeTest.decrypt(sink.bytes, keys: AgeKeys(passphrase: { Array("hunter22".utf8) }), name: "backup.age")
        #expect(wrong.error?.kind == .wrongPassphrase)
        #expect(wrong.error?.message.contains("backup.age") == true)
        #expect(wrong.error?.message.contains("hunter22") == false)
        let identityOnly = AgeTest.decrypt(sink.bytes, keys: AgeKeys(identities: [try .generate()]))
        #expect(identityOnly.error?.kind == .noIdentityMatches)
        #expect(identityOnly.error?.message.contains("passphrase") == true)

        // A file for a recipient does not ask for the passphrase.
        let x25519File = try AgeTest.encrypt([1, 2, 3], recipients: [try AgeX25519Identity.generate().recipient])
        var asked = false
        let passphraseOnly = AgeTest.decrypt(x25519File, keys: AgeKeys(passphrase: { asked = true; return [1] }))
        #expect(passphraseOnly.error?.kind == .noIdentityMatches && !asked)
    }

    // No scrypt ran: the passphrase, which scrypt needs, was never asked for (not timed).
    @Test func workFactorAbove22IsRefusedBeforeAnyWork() throws {
        let vector = Array(try Data(contentsOf: URL(fileURLWithPath: AgeTest.testkit + "/scrypt_work_factor_23")))
        let body = Array(vector[(vector.indices.first { vector[$0] == 0x0a && vector[$0 + 1] == 0x0a }! + 2)...])
        var asked = 0
        let result = AgeTest.decrypt(body, keys: AgeKeys(passphrase: { asked += 1; return Array("password".utf8) }), name: "wf23.age")
        #expect(result.error?.kind == .workFactorTooLarge)
        #expect(result.error?.message.contains("23") == true)
        // The passphrase is asked for only after the work factor passed: no scrypt ran.
        #expect(asked == 0)
        #expect(throws: AgeError.self) { try AgeEncryptingSink(output: AgeBytesSink(), passphrase: [1], workFactor: 23) }
    }

    @Test func bech32KnownAnswersAndRoundTrips() throws {
        // RFC 7748 §6.1: Alice's key pair; the Bech32 strings computed from BIP 173's reference.
        let alice = try AgeX25519Identity(bech32: "AGE-SECRET-KEY-1WURK6ZNNRZJH60QKC9E9RVNXGH05CTU8A0QFJ243WLA628DE9S4QRFH26J")
        #expect(alice.recipient.bech32 == "age1s5s0qzvfxzn4gayt0hwtg0hhtgxm7wsdycup4a8t5j5ca25mfe4qt4hs7q")
        #expect(alice.recipient == (try AgeX25519Recipient(bech32: "age1s5s0qzvfxzn4gayt0hwtg0hhtgxm7wsdycup4a8t5j5ca25mfe4qt4hs7q")))
        #expect(alice.bech32Encoded() == "AGE-SECRET-KEY-1WURK6ZNNRZJH60QKC9E9RVNXGH05CTU8A0QFJ243WLA628DE9S4QRFH26J")

        let testkit = try AgeX25519Identity(bech32: Self.testkitIdentity)
        #expect(testkit.bech32Encoded() == Self.testkitIdentity)
        #expect(testkit.recipient.bech32.hasPrefix("age1") && testkit.recipient.bech32.count == 62)
        #expect(try AgeX25519Recipient(bech32: testkit.recipient.bech32) == testkit.recipient)

        let fresh = try AgeX25519Identity.generate()
        let reparsed = try AgeX25519Identity(bech32: fresh.bech32Encoded())
        #expect(reparsed.recipient == fresh.recipient)
        #expect(fresh.recipient != testkit.recipient)

        // Strict decoding: a changed character (checksum), mixed case, the wrong prefix.
        var flipped = Array(Self.testkitIdentity)
        flipped[30] = flipped[30] == "Q" ? "P" : "Q"
        for bad in [String(flipped), "AGE-SECRET-KEY-1egtzvffv20835NWYV6270LXYVK2VKNX2MMDKWYKLMGR48UAWX40Q2P2LM0", alice.recipient.bech32] {
            #expect(throws: AgeError.self) { try AgeX25519Identity(bech32: bad) }
        }
        #expect(throws: AgeError.self) { try AgeX25519Recipient(bech32: "age1s5s0qzvfxzn4gayt0hwtg0hhtgxm7wsdycup4a8t5j5ca25mfe4qt4hs7p") }
        #expect(throws: AgeError.self) { try AgeX25519Recipient(bech32: Self.testkitIdentity) }
        // A plugin's recipient (age1<plugin>1…) is named as one, not as a bad X25519 recipient.
        let plugin = Bech32.encode(hrp: "age1yubikey", data: Array(repeating: 7, count: 33))
        do {
            _ = try AgeX25519Recipient(bech32: plugin)
            Issue.record("a plugin recipient parsed")
        } catch {
            #expect(error.kind == .recipientSyntax && error.message.contains("age plugin yubikey"), "\(error.message)")
        }
        do {
            _ = try AgeX25519Recipient(bech32: "age1pq1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq")
        } catch {
            #expect(error.kind == .recipientSyntax && error.message.contains("post-quantum"))
        }
    }

    @Test func secretKeysAreCutFromPrintedText() throws {
        let key = try AgeX25519Identity.generate().bech32Encoded()
        let body = String(key.dropFirst("AGE-SECRET-KEY-1".count))
        for text in ["Unknown option '-i=\(key)'", "cannot open \(key.lowercased()): No such file", "x AGE_SECRET_KEY_1\(body) y",
                     "AGE SECRET KEY 1\(body)", "AGE-PLUGIN-YUBIKEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQ!", "AGE-SECRET-KEY-PQ-1\(body)",
                     // Typed in groups, with a stray character, doubled dashes, a separator after the 1.
                     "AGE-SECRET-KEY-1_\(body)", "age-secret-key-1 \(body.prefix(30)) \(body.dropFirst(30))", "AGE-SECRET-KEY-1\(body.prefix(5))%\(body.dropFirst(5))",
                     "AGE--SECRET--KEY--1\(body)", "x\tAGE-SECRET-KEY-1\(body.prefix(20))é\(body.dropFirst(20))\ty", "AGE-PLUGIN-SE-TPM-1\(body)"] {
            let shown = SecretKeyText.redacted(text)
            #expect(shown.contains(SecretKeyText.placeholder) && !shown.uppercased().contains(String(body.prefix(10))) && !shown.contains("QQQQQQQQ")
                    && !shown.uppercased().contains(String(body.suffix(10))), "\(shown)")
        }
        // The data copied without the prefix (with the 1, in groups, lower case), known by its
        // checksum, and the words around it kept.
        for (text, expected) in [("cannot open \(body): No such file", "cannot open \(SecretKeyText.placeholder): No such file"),
                                 ("cannot open 1\(body.lowercased()).age", "cannot open 1\(SecretKeyText.placeholder).age"),
                                 ("x \(body.prefix(29)) \(body.dropFirst(29)) y", "x \(SecretKeyText.placeholder) y"),
                                 ("'\(body)' and '\(key)'", "'\(SecretKeyText.placeholder)' and '\(SecretKeyText.placeholder)'"),
                                 ("QQQQ\(body)QQQQ", "QQQQ\(SecretKeyText.placeholder)QQQQ")] {
            #expect(SecretKeyText.redacted(text) == expected, "\(SecretKeyText.redacted(text))")
        }
        // Changed by one character, 58 Bech32 characters are no key's data: they stay.
        let changed = String(body.prefix(20)) + (body.dropFirst(20).first == "Q" ? "P" : "Q") + String(body.dropFirst(21))
        #expect(SecretKeyText.redacted("cannot open \(changed)") == "cannot open \(changed)")
        // The prefix alone, as messages name it, and ordinary text stay as they are.
        for text in ["a secret key (AGE-SECRET-KEY-1…), not a recipient", "age1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs3290gq", "stage 1234567890",
                     "a plugin identity (AGE-PLUGIN-…), not a recipient: plugins are not supported; give an X25519 recipient (age1…)"] {
            #expect(SecretKeyText.redacted(text) == text)
        }
    }

    @Test("a key is hidden up to where its checksum holds, and the text after it stays: a file name's extension, the next word")
    func aKeyEndsWhereItsChecksumHolds() throws {
        let key = try AgeX25519Identity.generate().bech32Encoded()
        for (text, expected) in [("cannot open \(key).json.gz: no such file", "cannot open \(SecretKeyText.placeholder).json.gz: no such file"),
                                 ("Unknown option '-i=\(key)'\nUsage: pulse-archive inspect", "Unknown option '-i=\(SecretKeyText.placeholder)'\nUsage: pulse-archive inspect"),
                                 ("there is no store at \(key) (no pulse.sqlite)", "there is no store at \(SecretKeyText.placeholder) (no pulse.sqlite)"),
                                 ("x\(key.lowercased())zz7", "x\(SecretKeyText.placeholder)zz7")] {
            #expect(SecretKeyText.redacted(text) == expected)
        }
        // Typed wrong (one character changed), no checksum holds: every data character goes.
        let wrong = String(key.prefix(30)) + (key.dropFirst(30).first == "Q" ? "P" : "Q") + String(key.dropFirst(31))
        let shown = SecretKeyText.redacted("cannot open \(wrong).js")
        #expect(shown == "cannot open \(SecretKeyText.placeholder)", "\(shown)")
    }

    @Test func garbageGivenAsARecipientIsNotCalledUpperCase() throws {
        #expect(throws: AgeError(.recipientSyntax, "not an age X25519 recipient (age1… with a valid checksum and a 32-byte key)")) {
            try AgeX25519Recipient(bech32: "tr0ub4dor-Zebra-Quasar")
        }
        let upper = try AgeX25519Identity.generate().recipient.bech32.uppercased()
        do {
            _ = try AgeX25519Recipient(bech32: upper)
            Issue.record("an upper-case recipient was taken")
        } catch {
            #expect(error.message.hasPrefix("an X25519 recipient with upper-case letters"))
        }
    }

    @Test func identityFileErrorsGiveALineNumberNeverTheContent() throws {
        let key = try AgeX25519Identity.generate()
        let good = "# created: 2026-01-01T00:00:00Z\r\n# public key: \(key.recipient.bech32)\r\n\(key.bech32Encoded())\r\n\n"
        let parsed = try AgeIdentityFile.parse(Array(good.utf8), name: "key.txt")
        #expect(parsed.count == 1 && parsed[0].recipient == key.recipient)

        var typo = Array(key.bech32Encoded())
        typo[20] = typo[20] == "Q" ? "P" : "Q"
        let bad = "# comment\n\n\(key.bech32Encoded())\n\(String(typo))\n"
        do {
            _ = try AgeIdentityFile.parse(Array(bad.utf8), name: "key.txt")
            Issue.record("a bad line parsed")
        } catch {
            #expect(error.kind == .identityFileSyntax)
            #expect(error.message.contains("key.txt") && error.message.contains("line 4"))
            #expect(!error.message.contains(String(typo)) && !error.message.contains(String(typo.dropFirst(16).prefix(12))))
        }
        do {
            _ = try AgeIdentityFile.parse(Array("AGE-SECRET-KEY-PQ-1HZLGZUPT4ETPKDEV8HSGFDCYZ4E522W0A7PU2LHT8EH9W6YLNC3SW78XKG\n".utf8), name: "pq.txt")
            Issue.record("a post-quantum identity parsed")
        } catch {
            #expect(error.kind == .unsupportedIdentity && error.message.contains("AGE-SECRET-KEY-PQ-1") && error.message.contains("line 1"))
            #expect(!error.message.contains("HZLGZUPT"))
        }
        // An SSH private key, which age reads and this tool does not: said as such (it was
        // "spaces, tabs or other blank characters in the line").
        for header in ["-----BEGIN OPENSSH PRIVATE KEY-----", "\n-----BEGIN RSA PRIVATE KEY-----"] {
            do {
                _ = try AgeIdentityFile.parse(Array("\(header)\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n".utf8), name: "id_ed25519")
                Issue.record("an SSH key parsed")
            } catch {
                #expect(error.kind == .unsupportedIdentity && error.message.contains("id_ed25519 is an SSH or PEM private key"), "\(error.message)")
                #expect(!error.message.contains("b3BlbnNza"))
            }
        }
        do {
            _ = try AgeIdentityFile.parse(Array("AGE-PLUGIN-YUBIKEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQ\n".utf8), name: "yk.txt")
            Issue.record("a plugin identity parsed")
        } catch {
            #expect(error.kind == .unsupportedIdentity && error.message.contains("AGE-PLUGIN-YUBIKEY-1"))
        }
        #expect(throws: AgeError(.identityFileSyntax, "empty.txt: no identity in the file (expected AGE-SECRET-KEY-1… lines)")) {
            try AgeIdentityFile.parse(Array("# nothing\n".utf8), name: "empty.txt")
        }
    }

    @Test func recipientsFileParsesAndRefusesASecretWithoutShowingIt() throws {
        let a = try AgeX25519Identity.generate(), b = try AgeX25519Identity.generate()
        let parsed = try AgeRecipientsFile.parse(Array("# team\n\(a.recipient.bech32)\n\n\(b.recipient.bech32)\r\n".utf8), name: "r.txt")
        #expect(parsed == [a.recipient, b.recipient])
        // Spaces around a recipient: age refuses the file, and so do we (by line).
        do {
            _ = try AgeRecipientsFile.parse(Array("\(a.recipient.bech32)\n  \(b.recipient.bech32)\n".utf8), name: "r.txt")
            Issue.record("a recipient with spaces around it was taken")
        } catch {
            #expect(error.kind == .recipientSyntax && error.message.hasPrefix("r.txt, line 2: spaces, tabs or other blank characters"), "\(error.message)")
        }
        do {
            _ = try AgeRecipientsFile.parse(Array("\(a.recipient.bech32)\n\(b.bech32Encoded())\n".utf8), name: "r.txt")
            Issue.record("a secret key was taken as a recipient")
        } catch {
            #expect(error.kind == .recipientSyntax && error.message.contains("r.txt, line 2"))
            #expect(!error.message.contains(b.bech32Encoded()))
        }
    }

    /// A five-chunk file (the final chunk full, so that data after it is told from damage to
    /// it), cut, extended and damaged: each its own kind, each releasing only the plaintext of
    /// the chunks that checked.
    @Test func cutTrailingAndFlippedFilesEachGiveTheirOwnKind() throws {
        let identity = try AgeX25519Identity.generate()
        let plaintext = AgeTest.pattern(5 * 65_536)
        let file = try AgeTest.encrypt(plaintext, recipients: [identity.recipient])
        let keys = AgeKeys(identities: [identity])
        let payloadStart = Self.headerLength(file) + 16
        let sealed = 65_536 + 16

        let whole = AgeTest.decrypt(file, keys: keys)
        #expect(whole.error == nil && AgeTest.same(whole.plaintext, plaintext))

        // Cut at a chunk boundary: no final chunk.
        let cut = AgeTest.decrypt(Array(file.prefix(payloadStart + 4 * sealed)), keys: keys, name: "cut.age")
        #expect(cut.error?.kind == .truncated, "\(String(describing: cut.error))")
        #expect(cut.error?.message.contains("cut.age") == true)
        #expect(cut.plaintext.count == 4 * 65_536 && AgeTest.same(cut.plaintext, Array(plaintext.prefix(4 * 65_536))))

        // Cut inside the last chunk: its tag cannot check.
        let cutInside = AgeTest.decrypt(Array(file.dropLast(10)), keys: keys)
        #expect(cutInside.error?.kind == .badChunk)
        // Data after a short final chunk cannot be told from damage to it.
        let short = try AgeTest.encrypt(AgeTest.pattern(1000), recipients: [identity.recipient])
        #expect(AgeTest.decrypt(short + [0], keys: keys).error?.kind == .badChunk)

        // Data after the final chunk: all plaintext released, then the refusal.
        let trailing = AgeTest.decrypt(file + [0], keys: keys, name: "long.age")
        #expect(trailing.error?.kind == .trailingData)
        #expect(trailing.plaintext.count == plaintext.count && AgeTest.same(trailing.plaintext, plaintext))

        // One bit flipped in the last chunk: the first four chunks only, and where it failed.
        var flipped = file
        flipped[file.count - 30] ^= 0x01
        let damaged = AgeTest.decrypt(flipped, keys: keys, name: "flip.age")
        #expect(damaged.error?.kind == .badChunk)
        #expect(damaged.error?.message.contains("flip.age: chunk 4 at offset \(payloadStart + 4 * sealed)") == true, "\(String(describing: damaged.error))")
        #expect(damaged.plaintext.count == 4 * 65_536 && AgeTest.same(damaged.plaintext, Array(plaintext.prefix(4 * 65_536))))

        // Damage in the header's stanza is caught by its MAC or the unwrap, before any payload.
        var header = file
        header[payloadStart - 20] ^= 0x01
        let badHeader = AgeTest.decrypt(header, keys: keys)
        #expect(badHeader.error != nil && badHeader.plaintext.isEmpty)
    }

    @Test func headerMACMismatchIsItsOwnKind() throws {
        let identity = try AgeX25519Identity.generate()
        let file = try AgeTest.encrypt(Array("payload".utf8), recipients: [identity.recipient])
        // Rewrite the MAC with another canonical value: parse still passes, the MAC does not.
        let length = Self.headerLength(file)
        var changed = file
        let macStart = length - 1 - 43
        changed[macStart] = changed[macStart] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let result = AgeTest.decrypt(changed, keys: AgeKeys(identities: [identity]), name: "mac.age")
        #expect(result.error?.kind == .headerMAC)
        #expect(result.plaintext.isEmpty)
    }

    @Test func decryptingReadsOnlyWhatItNeedsAndCountsTheFileBytes() throws {
        let identity = try AgeX25519Identity.generate()
        let plaintext = AgeTest.pattern(20 * 65_536)
        let file = try AgeTest.encrypt(plaintext, recipients: [identity.recipient])
        let raw = AgeBytesSource(file, step: 4096)
        let source = try AgeDecryptingSource(source: raw, name: "big.age", keys: AgeKeys(identities: [identity]))
        // The header is read through one 64 KiB buffer: nothing beyond it yet.
        #expect(raw.position <= 64 * 1024)
        #expect(source.ciphertextBytesRead == Int64(raw.position))
        var buffer = [UInt8](repeating: 0, count: 1)
        _ = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
        #expect(raw.position <= 2 * 64 * 1024 + 16)
        var total = 1
        var big = [UInt8](repeating: 0, count: 100_000)
        while true {
            let count = try big.withUnsafeMutableBytes { try source.read(into: $0) }
            if count == 0 { break }
            total += count
        }
        #expect(total == plaintext.count)
        #expect(source.ciphertextBytesRead == Int64(file.count))
    }

    @Test func sniffingAndTheHeaderSummaryWithoutAKey() throws {
        let a = try AgeX25519Identity.generate(), b = try AgeX25519Identity.generate()
        let file = try AgeTest.encrypt([1, 2, 3], recipients: [a.recipient, b.recipient])
        #expect(AgeFormat.looksLikeAge(Array(file.prefix(64))))
        #expect(AgeFormat.looksLikeAge(Array("\n  \r\n-----BEGIN AGE ENCRYPTED FILE-----\nYWdl".utf8)))
        #expect(!AgeFormat.looksLikeAge([0x1f, 0x8b, 0x08, 0x00]))
        #expect(!AgeFormat.looksLikeAge(Array("{\"formatVersion\": 2}".utf8)))
        #expect(!AgeFormat.looksLikeAge(Array("garbage\n-----BEGIN AGE ENCRYPTED FILE-----\n".utf8)))

        let summary = try AgeFormat.readHeaderSummary(from: AgeBytesSource(file), name: "two.age")
        #expect(summary == AgeHeaderSummary(stanzaTypes: ["X25519", "X25519"], armored: false,
                                            recordedPayloadLength: Int64(file.count - Self.headerLength(file))))
        #expect(summary.stanzaCount == 2)

        let armored = Array(try Data(contentsOf: URL(fileURLWithPath: AgeTest.testkit + "/armor_scrypt")))
        let body = Array(armored[(armored.indices.first { armored[$0] == 0x0a && armored[$0 + 1] == 0x0a }! + 2)...])
        #expect(AgeFormat.looksLikeAge(body))
        let armoredSummary = try AgeFormat.readHeaderSummary(from: AgeBytesSource(body), name: "a.age")
        #expect(armoredSummary == AgeHeaderSummary(stanzaTypes: ["scrypt"], armored: true))

        #expect(throws: AgeError.self) { try AgeFormat.readHeaderSummary(from: AgeBytesSource(Array("age-encryption.org/v1\n-> X25519\n".utf8)), name: "cut.age") }
    }

    /// Found while writing the age-decryptor fuzz target's sniffing invariant (a file that
    /// decrypts is recognised by `looksLikeAge`): the armor reader counted a CRLF line of
    /// whitespace before the armor as one byte less than it is, so a file with more than
    /// 1 024 bytes of CRLF whitespace decrypted while `looksLikeAge` (the readers' sniffing)
    /// did not recognise it. Both now count the bytes: at most 1 024, whatever the line ends.
    @Test func whitespaceBeforeTheArmorCountsEveryByteAsTheSniffingDoes() throws {
        let vector = Array(try Data(contentsOf: URL(fileURLWithPath: AgeTest.testkit + "/armor_x25519")))
        let armor = Array(vector[(vector.indices.first { vector[$0] == 0x0a && vector[$0 + 1] == 0x0a }! + 2)...])
        let keys = AgeKeys(identities: [try AgeX25519Identity(bech32: Self.testkitIdentity)])
        for (lines, accepted) in [(512, true), (513, false), (600, false)] {
            let file = Array(repeating: Array("\r\n".utf8), count: lines).flatMap { $0 } + armor
            #expect(AgeFormat.looksLikeAge(Array(file.prefix(1100))) == accepted, "\(lines) CRLF lines")
            let result = AgeTest.decrypt(file, keys: keys, name: "crlf.age")
            if accepted {
                #expect(result.error == nil, "\(lines) CRLF lines: \(result.error.map { "\($0)" } ?? "")")
            } else {
                #expect(result.error?.kind == .armor, "\(lines) CRLF lines")
                #expect(result.error?.message.contains("too much whitespace before the armor") == true)
                #expect(result.plaintext.isEmpty)
            }
        }
    }

    @Test func theMostRecipientsAHeaderCanHoldIsWhatTheReaderAccepts() throws {
        let most = AgeFormat.maximumX25519Recipients
        #expect(most == 10_698)
        let mine = try AgeX25519Identity.generate()
        var recipients: [AgeX25519Recipient] = []
        for _ in 1..<most { recipients.append(try AgeX25519Identity.generate().recipient) }
        recipients.append(mine.recipient)
        let file = try AgeTest.encrypt(AgeTest.pattern(1000), recipients: recipients)
        // The header at the limit: 1 048 576 bytes at most, and 98 more would pass it.
        #expect(Self.headerLength(file) <= 1 << 20 && Self.headerLength(file) + 98 > 1 << 20)
        let opened = AgeTest.decrypt(file, keys: AgeKeys(identities: [mine]))
        #expect(opened.error == nil && AgeTest.same(opened.plaintext, AgeTest.pattern(1000)), "\(String(describing: opened.error))")
        // One more is refused by the writer before it writes a byte.
        let sink = AgeBytesSink()
        #expect(throws: AgeError.self) { try AgeEncryptingSink(output: sink, recipients: recipients + [mine.recipient]) }
        #expect(sink.bytes.isEmpty)
        do {
            try AgeFormat.checkRecipientCount(most + 1)
            Issue.record("\(most + 1) recipients accepted")
        } catch {
            #expect(error.kind == .tooManyRecipients)
        }
    }

    @Test func aKeylessStructureCheckAcceptsOnlyLengthsACompleteFileCanHave() throws {
        let identity = try AgeX25519Identity.generate()
        for size in [1, 65_535, 65_536, 65_537, 3 * 65_536] {
            let file = try AgeTest.encrypt(AgeTest.pattern(size), recipients: [identity.recipient])
            let summary = try AgeFormat.checkStructure(of: AgeBytesSource(file, step: 777), name: "f.age")
            #expect(summary.stanzaTypes == ["X25519"], "size \(size)")
            let header = Self.headerLength(file)
            // Cut after the header, in the nonce, after the nonce, a byte or a tag past a chunk.
            for cut in [header, header + 15, header + 16, header + 16 + 65_552 + 1, header + 16 + 65_552 + 16] where cut < file.count {
                do {
                    _ = try AgeFormat.checkStructure(of: AgeBytesSource(Array(file.prefix(cut))), name: "f.age")
                    Issue.record("size \(size) cut at \(cut - header) after the header passed")
                } catch {
                    #expect(error.kind == .truncated && error.message.hasPrefix("f.age: "), "\(error)")
                }
            }
        }
        // An empty plaintext is one empty chunk: complete for age, but it holds no archive.
        let empty = try AgeTest.encrypt([], recipients: [identity.recipient])
        #expect(throws: AgeError.self) { try AgeFormat.checkStructure(of: AgeBytesSource(empty), name: "e.age") }
    }

    @Test("a file to public keys records its payload's length, announced or rewritten at the end; every cut, even at a chunk's end or inside a chunk, and every byte added is refused without a key")
    func theHeaderRecordsThePayloadLength() throws {
        let identity = try AgeX25519Identity.generate()
        var generator = SeededRandom.fromEnvironment("age cut points")
        for size in [0, 1, 65_535, 65_536, 65_537, 3 * 65_536 + 5] {
            let plaintext = AgeTest.pattern(size)
            let announced = try AgeTest.encrypt(plaintext, recipients: [identity.recipient])
            let rewritten = try AgeTest.encryptRewriting(plaintext, recipients: [identity.recipient], writeSize: 7_000)
            for (form, file) in [("announced", announced), ("rewritten", rewritten)] {
                let header = Self.headerLength(file)
                let payload = Int64(file.count - header)
                #expect(AgePayloadLength.payloadLength(plaintext: Int64(size)) == payload, "\(form) \(size)")
                let summary = try AgeFormat.readHeaderSummary(from: AgeBytesSource(file), name: "f.age")
                #expect(summary.recordedPayloadLength == payload && summary.stanzaTypes == ["X25519"], "\(form) \(size): \(summary)")
                // Decrypts, the record's MAC included, and reads as age reads it.
                let opened = AgeTest.decrypt(file, keys: AgeKeys(identities: [identity]))
                #expect(opened.error == nil && AgeTest.same(opened.plaintext, plaintext), "\(form) \(size): \(String(describing: opened.error))")
                guard size > 0 else { continue }
                #expect(try AgeFormat.checkStructure(of: AgeBytesSource(file, step: 999), name: "f.age").recordedPayloadLength == payload)
                var cuts: [Int] = [header + 16 + 65_552, file.count - 1]
                for _ in 0..<8 { cuts.append(Int.random(in: (header + 16)..<file.count, using: &generator)) }
                for cut in cuts where cut < file.count {
                    do throws(AgeError) {
                        _ = try AgeFormat.checkStructure(of: AgeBytesSource(Array(file.prefix(cut))), name: "f.age")
                        Issue.record("seed \(generator.seed): \(form) \(size) cut at \(cut) of \(file.count) passed")
                    } catch {
                        #expect(error.kind == .truncated, "seed \(generator.seed): \(form) \(size) cut at \(cut): \(error)")
                    }
                }
                #expect(throws: AgeError.self) { try AgeFormat.checkStructure(of: AgeBytesSource(file + [0]), name: "f.age") }
            }
        }
        // A sink told a length it is not given refuses to finish.
        let encryptor = try AgeEncryptingSink(output: AgeBytesSink(), recipients: [identity.recipient], plaintextLength: 10)
        try [UInt8](repeating: 1, count: 9).withUnsafeBytes { try encryptor.write($0) }
        #expect(throws: AgeError.self) { try encryptor.finish() }
        // No length from a passphrase (an scrypt stanza is alone), nor without an announced
        // length over a sink that cannot rewrite.
        let scrypt = try AgeTest.encrypt(AgeTest.pattern(100), passphrase: "p", workFactor: 1)
        #expect(try AgeFormat.readHeaderSummary(from: AgeBytesSource(scrypt), name: "s.age").recordedPayloadLength == nil)
        let plain = try AgeTest.encrypt(AgeTest.pattern(100), recipients: [identity.recipient], announced: false)
        #expect(try AgeFormat.checkStructure(of: AgeBytesSource(plain), name: "p.age").recordedPayloadLength == nil)
    }

    @Test("with the key, a file cut inside its nonce or a byte into a chunk says so, not 'after the header' or 'an empty chunk'")
    func cutsSayWhereTheFileEnds() throws {
        let identity = try AgeX25519Identity.generate()
        let file = try AgeTest.encrypt(AgeTest.pattern(100_000), recipients: [identity.recipient])
        let header = Self.headerLength(file)
        for (cut, words) in [(header + 8, "ends inside the payload's nonce (8 of its 16 bytes)"), (header, "ends after the age header, before the payload's nonce"),
                             (header + 16 + 65_552 + 1, "chunk 1 at offset"), (header + 16 + 65_552 + 16, "is an empty final chunk")] {
            let result = AgeTest.decrypt(Array(file.prefix(cut)), keys: AgeKeys(identities: [identity]))
            #expect(result.error?.message.contains(words) == true, "cut at \(cut - header) after the header: \(String(describing: result.error))")
        }
        let fragment = AgeTest.decrypt(Array(file.prefix(header + 16 + 65_552 + 1)), keys: AgeKeys(identities: [identity]))
        #expect(fragment.error?.message.contains("is 1 bytes, shorter than a chunk's tag") == true, "\(String(describing: fragment.error))")
    }

    @Test("a length record not in the writer's form is refused by the key-less check, and counts as none in a summary")
    func aDamagedLengthRecord() throws {
        let identity = try AgeX25519Identity.generate()
        let file = try AgeTest.encrypt(AgeTest.pattern(70_000), recipients: [identity.recipient])
        let text = String(decoding: file.prefix(Self.headerLength(file)), as: UTF8.self)
        let record = try #require(text.split(separator: "\n").first { $0.hasPrefix("-> pulse-archive-length ") })
        for damaged in [record.dropLast() + "", record + "0", record + " 1", String(record).replacingOccurrences(of: "00", with: "0x")] {
            let bytes = Array(text.replacingOccurrences(of: String(record), with: String(damaged)).utf8) + file.dropFirst(Self.headerLength(file))
            do throws(AgeError) {
                _ = try AgeFormat.checkStructure(of: AgeBytesSource(bytes), name: "d.age")
                Issue.record("\(damaged) passed")
            } catch {
                #expect(error.kind == .damagedHeader && error.message.contains("pulse-archive-length record is damaged"), "\(damaged): \(error)")
            }
            #expect(try AgeFormat.readHeaderSummary(from: AgeBytesSource(bytes), name: "d.age").recordedPayloadLength == nil)
        }
        // Two records.
        let twice = Array(text.replacingOccurrences(of: String(record), with: String(record) + "\n\n" + String(record)).utf8) + file.dropFirst(Self.headerLength(file))
        #expect(throws: AgeError.self) { try AgeFormat.checkStructure(of: AgeBytesSource(twice), name: "t.age") }
    }

    @Test func aFileWhoseLineEndsWereConvertedSaysSo() throws {
        let identity = try AgeX25519Identity.generate()
        let file = try AgeTest.encrypt(AgeTest.pattern(100), recipients: [identity.recipient])
        let mangled = file.flatMap { $0 == 0x0A ? [0x0D, 0x0A] : [$0] }
        let result = AgeTest.decrypt(mangled, keys: AgeKeys(identities: [identity]), name: "m.age")
        #expect(result.error?.kind == .damagedHeader)
        #expect(result.error?.message.contains("m.age: the file's line ends were converted to CR LF") == true, "\(String(describing: result.error))")
    }

    @Test func lowerCaseIdentitiesAreRefusedAsAgeRefusesThem() throws {
        let key = try AgeX25519Identity.generate()
        let lower = key.bech32Encoded().lowercased()
        #expect(throws: AgeError.self) { try AgeX25519Identity(bech32: lower) }
        do {
            _ = try AgeIdentityFile.parse(Array("# mine\n\(lower)\n".utf8), name: "k.txt")
            Issue.record("a lower-case identity parsed")
        } catch {
            #expect(error.kind == .identityFileSyntax && error.message.contains("k.txt, line 2") && error.message.contains("upper case"))
            #expect(!error.message.contains(String(lower.dropFirst(16).prefix(12))))
        }
        #expect(try AgeX25519Identity(bech32: key.bech32Encoded()).recipient == key.recipient)
    }
}

extension Array where Element == UInt8 {
    fileprivate func firstIndex(of byte: UInt8, after offset: Int) -> Int? {
        self[offset...].firstIndex(of: byte)
    }
}

extension ArraySlice where Element == UInt8 {
    fileprivate func firstIndex(of byte: UInt8, after offset: Int) -> Int? {
        self[(startIndex + offset)...].firstIndex(of: byte)
    }
}
