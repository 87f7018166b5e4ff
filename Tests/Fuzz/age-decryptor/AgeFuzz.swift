import PulseSystem
// Fuzz target: the age decryptor (Sources/PulseAge), the identity-file and recipients-file
// parsers and the header summary, all on the same input.
// The SwiftPM target fuzz-age-decryptor (Package.swift), built by scripts/fuzz.sh with the fuzzer and
// address sanitizers and -DPULSE_FUZZ; without that flag it builds as a stub (docs/testing.md).
//
// The input is an age file (binary or armored) opened with two fixed X25519 identities of the
// age test kit and, for an scrypt stanza, the test kit's passphrase — but only when the
// stanza's work factor is at most `ageFuzzMaxWorkFactor`: above it the passphrase closure
// throws a marker error instead (scrypt at 22 would take seconds and 4 GiB), so every
// execution stays fast. Besides crashes, leaks and sanitizer reports, any violated invariant
// traps (see `ageFuzzViolation` calls): plaintext released that the ciphertext cannot hold or
// in pieces other than whole chunks before an error; a success whose header MAC does not
// check, whose payload length is not exactly the plaintext plus one tag per chunk, or that
// `AgeFormat.looksLikeAge` would not recognise; results that depend on how the source hands out
// its bytes; the passphrase asked more than once, for a file that is not one scrypt stanza or
// above the work-factor limit; a closure's error not passed on unchanged; a header summary that
// disagrees with what the decryptor read; a key or passphrase in a message that the input did
// not contain; parsed keys that do not round-trip through their Bech32 text.
#if PULSE_FUZZ
@testable import PulseSystem
@testable import PulseAge
import Foundation

/// The scrypt work factor up to which the passphrase is given (about 1 MiB and a few
/// milliseconds of scrypt).
private let ageFuzzMaxWorkFactor = 10
private let ageFuzzPassphrase = "password"  // the test kit's
private let ageFuzzIdentityTexts = [
    "AGE-SECRET-KEY-1EGTZVFFV20835NWYV6270LXYVK2VKNX2MMDKWYKLMGR48UAWX40Q2P2LM0",
    "AGE-SECRET-KEY-143WN7DCXU4G8R5AXQSSYD9AEPYDNT3HXSLWSPK36CDU6E8M59SSSAGZ3KG",
]
nonisolated(unsafe) private let ageFuzzIdentities: [AgeX25519Identity] = ageFuzzIdentityTexts.map { try! AgeX25519Identity(bech32: $0) }
private let ageFuzzCappedMessage = "age-fuzz: work factor above the fuzzer's cap, passphrase withheld"

private func ageFuzzViolation(_ what: String) -> Never {
    fatalError("age fuzz invariant violated: \(what)")
}

/// Bytes in memory, handed out at most `step` bytes per read.
private final class AgeFuzzSource: ByteSource {
    var handleOwners: [HandleOwner] { [] }

    let bytes: [UInt8]
    let step: Int
    var position = 0

    init(_ bytes: [UInt8], step: Int) {
        self.bytes = bytes
        self.step = step
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = Swift.min(buffer.count, step, bytes.count - position)
        guard count > 0 else { return 0 }
        bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + position, byteCount: count) }
        position += count
        return count
    }
}

/// What the header parser alone says of the input (nil when it refuses it), and the length of
/// the decoded age file as far as it can be read (armor decoded; up to an armor error).
private struct AgeFuzzHeaderFacts {
    var header: AgeHeader?
    var armored = false
    /// Offset of the first payload byte (after the 16-byte nonce) in the decoded file.
    var payloadStart: Int64 = 0
    var decodedLength: Int64 = 0
    var scryptWorkFactor: Int?

    init(_ bytes: [UInt8]) {
        guard let (input, armored) = try? AgeFormat.openInput(AgeFuzzSource(bytes, step: 1 << 20), name: "facts") else { return }
        self.armored = armored
        guard let header = try? AgeHeader.read(from: input, name: "facts") else { return }
        self.header = header
        payloadStart = input.offset + 16
        var scratch = [UInt8](repeating: 0, count: 1 << 16)
        while let count = try? scratch.withUnsafeMutableBytes({ try input.read(into: $0) }), count > 0 {}
        decodedLength = input.offset
        if let stanza = header.stanzas.first(where: { $0.type == "scrypt" }), stanza.arguments.count == 2 {
            let text = stanza.arguments[1]
            if text.utf8.count <= 9, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
                scryptWorkFactor = Int(text)
            }
        }
    }
}

private struct AgeFuzzOutcome: Equatable {
    var plaintext: [UInt8] = []
    var opened = false           // the initializer returned (header, key and MAC accepted)
    var error: AgeErrorKind?
    var message = ""
    var passphraseCalls = 0
}

private func ageFuzzDecrypt(_ bytes: [UInt8], facts: AgeFuzzHeaderFacts, step: Int, readSize: Int) -> AgeFuzzOutcome {
    var outcome = AgeFuzzOutcome()
    var calls = 0
    let keys = AgeKeys(identities: ageFuzzIdentities, passphrase: {
        calls += 1
        // Asked only for a header of exactly one scrypt stanza whose work factor passed.
        guard let header = facts.header, header.stanzas.count == 1, header.stanzas[0].type == "scrypt",
              let factor = facts.scryptWorkFactor, factor <= AgeFormat.maximumWorkFactor
        else { ageFuzzViolation("the passphrase was asked for a header that is not one scrypt stanza with a work factor ≤ 22") }
        if factor > ageFuzzMaxWorkFactor { throw AgeError(.io, ageFuzzCappedMessage) }
        return Array(ageFuzzPassphrase.utf8)
    })
    do {
        let source = try AgeDecryptingSource(source: AgeFuzzSource(bytes, step: step), name: "fuzz.age", keys: keys)
        outcome.opened = true
        var buffer = [UInt8](repeating: 0, count: readSize)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
            if count == 0 { break }
            outcome.plaintext += buffer[..<count]
        }
        if source.ciphertextBytesRead != Int64(bytes.count) {
            ageFuzzViolation("success after reading \(source.ciphertextBytesRead) of \(bytes.count) bytes")
        }
    } catch let error as AgeError {
        outcome.error = error.kind
        outcome.message = error.message
    } catch {
        ageFuzzViolation("an error that is not an AgeError: \(error)")
    }
    outcome.passphraseCalls = calls
    return outcome
}

private func ageFuzzCheckDecryption(_ bytes: [UInt8]) {
    let facts = AgeFuzzHeaderFacts(bytes)
    let first = ageFuzzDecrypt(bytes, facts: facts, step: 1 << 20, readSize: AgeFormat.chunkSize + 7)
    let step = 1 + Int(bytes.last ?? 0) % 251
    let second = ageFuzzDecrypt(bytes, facts: facts, step: step, readSize: 4099)
    guard first == second else {
        ageFuzzViolation("the outcome depends on the source's pieces: \(first.error.map { "\($0)" } ?? "success") \(first.plaintext.count) bytes vs \(second.error.map { "\($0)" } ?? "success") \(second.plaintext.count) bytes (step \(step)): \(first.message) / \(second.message)")
    }
    let outcome = first
    let released = Int64(outcome.plaintext.count)
    let chunks = Int64(Swift.max(1, (outcome.plaintext.count + AgeFormat.chunkSize - 1) / AgeFormat.chunkSize))
    if outcome.passphraseCalls > 1 { ageFuzzViolation("the passphrase was asked \(outcome.passphraseCalls) times") }

    // Plaintext comes only from an opened file, never more than the payload holds.
    if released > 0 {
        guard outcome.opened, facts.header != nil else { ageFuzzViolation("plaintext released from a file whose header did not open") }
        guard released + 16 * chunks <= facts.decodedLength - facts.payloadStart else {
            ageFuzzViolation("\(released) plaintext bytes released from a payload of \(facts.decodedLength - facts.payloadStart) bytes")
        }
    }

    // What the header summary says must agree with what the decryptor read.
    let summary = try? AgeFormat.readHeaderSummary(from: AgeFuzzSource(bytes, step: step), name: "fuzz.age")
    if let summary, let header = facts.header {
        guard summary.stanzaTypes == header.stanzas.map(\.type).filter({ $0 != AgePayloadLength.stanzaType }), summary.armored == facts.armored else {
            ageFuzzViolation("the header summary (\(summary)) is not the header parsed")
        }
    } else if summary != nil || facts.header != nil {
        ageFuzzViolation("the header summary and the header parser disagree on whether the header is valid")
    }

    // No secret in a message unless the input itself held it.
    for secret in ageFuzzIdentityTexts + [ageFuzzPassphrase] where outcome.message.contains(secret) {
        if !String(decoding: bytes, as: UTF8.self).contains(secret) { ageFuzzViolation("a message shows a key or the passphrase: \(outcome.message)") }
    }

    guard let kind = outcome.error else {
        // Success: the header parsed, its MAC checks under the file key, every payload byte
        // is plaintext or a tag, and the reader's sniffing recognises the file.
        guard let header = facts.header, summary != nil else { ageFuzzViolation("success on a file whose header does not parse") }
        let keys = AgeKeys(identities: ageFuzzIdentities, passphrase: { Array(ageFuzzPassphrase.utf8) })
        guard let fileKey = try? AgeUnwrap.fileKey(header: header, keys: keys, name: "check") else {
            ageFuzzViolation("success on a file whose file key does not unwrap")
        }
        guard let macKey = try? fileKey.withBytes({ (key) throws(AgeError) in try LibCrypto.hkdfSHA256(key: key, salt: [], info: "header") }),
              let mac = try? LibCrypto.hmacSHA256(key: macKey, data: header.macInput), mac == header.mac
        else { ageFuzzViolation("success on a file whose header MAC does not check") }
        let payload = facts.decodedLength - facts.payloadStart
        guard payload == released + 16 * chunks else {
            ageFuzzViolation("success with \(released) plaintext bytes from a payload of \(payload) bytes (expected \(released + 16 * chunks))")
        }
        guard AgeFormat.looksLikeAge(Array(bytes.prefix(1100))) else { ageFuzzViolation("a file that decrypts is not recognised by looksLikeAge") }
        if let factor = facts.scryptWorkFactor, factor > ageFuzzMaxWorkFactor { ageFuzzViolation("success without the passphrase") }
        return
    }

    // Failure.
    switch kind {
    case .crypto, .unsupportedIdentity, .identityFileSyntax, .recipientSyntax:
        ageFuzzViolation("an error of kind \(kind) from decryption: \(outcome.message)")
    case .io:
        guard outcome.message == ageFuzzCappedMessage, outcome.passphraseCalls == 1 else {
            ageFuzzViolation("an I/O error from memory, or the closure's error changed: \(outcome.message)")
        }
    default: break
    }
    // The closure's own error comes back as it was thrown (checked above); every other names the file.
    if kind != .io, !outcome.message.hasPrefix("fuzz.age") { ageFuzzViolation("a message that does not name the file: \(outcome.message)") }
    if kind == .trailingData {
        guard outcome.opened else { ageFuzzViolation("trailing data reported before the header opened") }
    } else if released % Int64(AgeFormat.chunkSize) != 0 {
        ageFuzzViolation("\(released) bytes released before a \(kind) error: not whole chunks")
    }
    let payloadKinds: Set<AgeErrorKind> = [.badChunk, .truncated, .trailingData, .armor]
    if outcome.opened, !payloadKinds.contains(kind) { ageFuzzViolation("a \(kind) error after the header opened: \(outcome.message)") }
    let headerKinds: Set<AgeErrorKind> = [.damagedHeader, .unsupportedVersion, .armor, .noIdentityMatches, .wrongPassphrase,
                                          .workFactorTooLarge, .headerMAC, .io]
    if !outcome.opened, !headerKinds.contains(kind) { ageFuzzViolation("a \(kind) error before the header opened: \(outcome.message)") }
    // Errors that come after the header parsed need a header that parses.
    if [.noIdentityMatches, .wrongPassphrase, .workFactorTooLarge, .headerMAC].contains(kind) || outcome.opened {
        if facts.header == nil { ageFuzzViolation("a \(kind) error for a header the parser refuses") }
    }
    if kind == .workFactorTooLarge, outcome.passphraseCalls != 0 { ageFuzzViolation("the passphrase was asked above the work-factor limit") }
}

/// Lines of the input that look like a secret key (long enough to be one), which no message
/// may repeat.
private func ageFuzzSecretLines(_ bytes: [UInt8]) -> [String] {
    bytes.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
        .filter { $0.uppercased().contains("SECRET-KEY") && $0.count >= 32 }
}

private func ageFuzzCheckKeyFiles(_ bytes: [UInt8]) {
    let secretLines = ageFuzzSecretLines(bytes)
    do {
        let identities = try AgeIdentityFile.parse(bytes, name: "keys.txt")
        if identities.isEmpty { ageFuzzViolation("an identity file parsed to no identity") }
        for identity in identities {
            guard let again = try? AgeX25519Identity(bech32: identity.bech32Encoded()), again.recipient == identity.recipient else {
                ageFuzzViolation("an identity does not round-trip through its Bech32 text")
            }
        }
    } catch {
        guard error.kind == .identityFileSyntax || error.kind == .unsupportedIdentity else { ageFuzzViolation("identity file: a \(error.kind) error") }
        for line in secretLines where error.message.contains(line.trimmingCharacters(in: .whitespacesAndNewlines)) {
            ageFuzzViolation("an identity-file message repeats a line")
        }
    }
    do {
        let recipients = try AgeRecipientsFile.parse(bytes, name: "recipients.txt")
        if recipients.isEmpty { ageFuzzViolation("a recipients file parsed to no recipient") }
        for recipient in recipients {
            guard let again = try? AgeX25519Recipient(bech32: recipient.bech32), again == recipient else {
                ageFuzzViolation("a recipient does not round-trip through its Bech32 text")
            }
        }
    } catch {
        guard error.kind == .recipientSyntax else { ageFuzzViolation("recipients file: a \(error.kind) error") }
        for line in secretLines where error.message.contains(line.trimmingCharacters(in: .whitespacesAndNewlines)) {
            ageFuzzViolation("a recipients-file message repeats a line")
        }
    }
}

/// With PULSE_FUZZ_AGE_SEEDS set, writes files our own encrypting sink makes into that
/// directory before fuzzing starts (scripts/fuzz.sh passes it as a seed directory): X25519 to
/// one and two of the fixed identities, and scrypt at work factors 1 and 10, at sizes around
/// the chunk boundary. New keys and nonces each time; nothing is committed.
@_cdecl("LLVMFuzzerInitialize")
public func ageFuzzInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    guard let directory = ProcessInfo.processInfo.environment["PULSE_FUZZ_AGE_SEEDS"] else { return 0 }
    final class Collect: ByteSink {
        var handleOwners: [HandleOwner] { [] }

        var bytes: [UInt8] = []
        func write(_ buffer: UnsafeRawBufferPointer) throws { bytes += buffer }
        func finish() throws {}
    }
    func seed(_ name: String, _ size: Int, _ make: (ByteSink) throws -> AgeEncryptingSink) {
        let sink = Collect()
        let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        do {
            let encryptor = try make(sink)
            try plaintext.withUnsafeBytes { try encryptor.write($0) }
            try encryptor.finish()
            try Data(sink.bytes).write(to: URL(fileURLWithPath: "\(directory)/own-\(name)-\(size)"))
        } catch {
            fatalError("age fuzz: cannot write the seed \(name)-\(size): \(error)")
        }
    }
    let one = [ageFuzzIdentities[0].recipient]
    let both = ageFuzzIdentities.map(\.recipient)
    for size in [0, 1, 100, AgeFormat.chunkSize - 1, AgeFormat.chunkSize, AgeFormat.chunkSize + 1] {
        seed("x25519", size) { try AgeEncryptingSink(output: $0, recipients: one) }
    }
    seed("x25519-two", 100) { try AgeEncryptingSink(output: $0, recipients: both) }
    for size in [0, 100, AgeFormat.chunkSize] {
        seed("scrypt1", size) { try AgeEncryptingSink(output: $0, passphrase: Array(ageFuzzPassphrase.utf8), workFactor: 1) }
    }
    seed("scrypt10", 10) { try AgeEncryptingSink(output: $0, passphrase: Array(ageFuzzPassphrase.utf8), workFactor: 10) }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAge(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    ageFuzzCheckDecryption(bytes)
    ageFuzzCheckKeyFiles(bytes)
    _ = AgeFormat.looksLikeAge(bytes)
    return 0
}
#else
import Foundation

/// Built without `-DPULSE_FUZZ` (a plain `swift build`): libFuzzer is not linked, so there is
/// nothing to run.
@main
enum NotBuiltForFuzzing {
    static func main() {
        FileHandle.standardError.write(Data("fuzz-age-decryptor: built without the fuzzer; scripts/fuzz.sh builds it (docs/testing.md)\n".utf8))
        exit(64)
    }
}
#endif
