import Foundation
import PulseAge
import Testing

/// The format's public test vectors (Tests/Resources/age-testkit): every one ends as its
/// `expect:` says and releases exactly the plaintext whose SHA-256 it gives.
@Suite struct AgeTestkitTests {
    static let expectedKinds: [String: Set<AgeErrorKind>] = [
        "no match": [.noIdentityMatches, .wrongPassphrase],
        "HMAC failure": [.headerMAC],
        "header failure": [.damagedHeader, .unsupportedVersion, .workFactorTooLarge],
        "payload failure": [.badChunk, .truncated, .trailingData],
        "armor failure": [.armor],
    ]
    static let knownKeys: Set<String> = ["expect", "payload", "file key", "identity", "passphrase", "armored", "comment", "compressed"]

    @Test func everyVectorEndsAsItsExpectSays() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: AgeTest.testkit).filter { $0 != "README.md" }.sorted()
        #expect(names.count == 143)
        var failures: [String] = []
        var checked = 0, hybrids = 0, hashed = 0
        for name in names {
            let file = Array(try Data(contentsOf: URL(fileURLWithPath: AgeTest.testkit + "/" + name)))
            guard let split = (0..<file.count - 1).first(where: { file[$0] == 0x0a && file[$0 + 1] == 0x0a }) else {
                failures.append("\(name): no blank line after the vector's header"); continue
            }
            var fields: [(String, String)] = []
            for line in String(decoding: file[..<split], as: UTF8.self).split(separator: "\n") {
                guard let colon = line.firstIndex(of: ":") else { failures.append("\(name): bad line"); continue }
                fields.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
            guard fields.allSatisfy({ Self.knownKeys.contains($0.0) }) else { failures.append("\(name): unknown key"); continue }
            func values(_ key: String) -> [String] { fields.filter { $0.0 == key }.map(\.1) }
            let expect = values("expect").first ?? "?"
            var body = Array(file[(split + 2)...])
            if values("compressed").first == "zlib" {
                guard let inflated = AgeTest.inflateZlib(body) else { failures.append("\(name): does not inflate"); continue }
                body = inflated
            }
            #expect(AgeFormat.looksLikeAge(body) || expect == "header failure" || expect == "armor failure", "\(name) not sniffed as age")

            // Identities: a post-quantum one is refused as unsupported, naming its type.
            var identities: [AgeX25519Identity] = []
            var unsupported: AgeError?
            for text in values("identity") {
                do { identities.append(try AgeX25519Identity(bech32: text)) } catch {
                    if error.kind == .unsupportedIdentity { unsupported = error } else { failures.append("\(name): identity does not parse: \(error)") }
                }
            }
            if name.hasPrefix("hybrid") || name == "armor_hybrid" {
                hybrids += 1
                if unsupported?.message.contains("AGE-SECRET-KEY-PQ-1") != true { failures.append("\(name): PQ identity not refused as unsupported") }
                continue
            }
            if let unsupported { failures.append("\(name): unexpected \(unsupported)"); continue }

            let passphrase = values("passphrase").first
            var asked = 0
            let keys = AgeKeys(identities: identities, passphrase: passphrase.map { text in { asked += 1; return Array(text.utf8) } })
            // Small reads from a source that hands out odd-sized pieces, to exercise buffering.
            let result = AgeTest.decrypt(body, keys: keys, name: name, readSize: 4099, step: 7919)
            checked += 1
            #expect(asked <= 1, "\(name): passphrase asked \(asked) times")
            if expect == "success" {
                if let error = result.error { failures.append("\(name): expected success, got \(error.kind): \(error.message)") }
            } else if let kinds = Self.expectedKinds[expect] {
                if let error = result.error {
                    if !kinds.contains(error.kind) { failures.append("\(name): expected \(expect), got \(error.kind): \(error.message)") }
                    if !error.message.contains(name) { failures.append("\(name): message does not name the file: \(error.message)") }
                    for secret in values("identity") + values("passphrase").filter({ $0.count >= 6 }) where error.message.contains(secret) {
                        failures.append("\(name): message shows a secret")
                    }
                } else {
                    failures.append("\(name): expected \(expect), got success")
                }
            } else {
                failures.append("\(name): unknown expect \(expect)")
            }
            if let payload = values("payload").first {
                hashed += 1
                if AgeTest.hex(result.sha256) != payload { failures.append("\(name): released plaintext has SHA-256 \(AgeTest.hex(result.sha256)), expected \(payload)") }
            } else if !result.plaintext.isEmpty {
                failures.append("\(name): released \(result.plaintext.count) bytes where none was expected")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) vectors wrong:\n\(failures.joined(separator: "\n"))")
        #expect(checked + hybrids == 143)
        #expect(hybrids == 19)
        #expect(hashed == 45 - 5)  // the five hybrid vectors with a payload are refused before decrypting
    }
}
