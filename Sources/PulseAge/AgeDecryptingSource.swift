import CCrypto
import PulseSystem

/// The plaintext of an age file (binary or armored), decrypted as it is read.
///
/// Creating it reads the header, unwraps the file key (X25519 identities, or the passphrase
/// for an scrypt stanza), checks the header MAC and reads the payload nonce. Reading then
/// decrypts one 64 KiB chunk at a time: a chunk's plaintext is handed out only after its tag
/// checks, so what a reader has seen is authentic up to the point of an error. Memory is a few
/// chunk buffers whatever the size. The source is read only as far as needed.
public final class AgeDecryptingSource: ByteSource {
    static let sealedChunkSize = AgeFormat.chunkSize + ChaChaPoly.tagSize

    private let name: String
    private let counter: CountedSource
    private let input: AgeInput
    private let cipher: ChaChaPoly
    private let payloadStart: Int64
    private var sealed: UnsafeMutableRawBufferPointer
    private var plain: UnsafeMutableRawBufferPointer
    private var plainStart = 0
    private var plainEnd = 0
    private var chunkIndex: UInt64 = 0
    private var finished = false
    /// An error found after the final chunk's plaintext was ready (trailing data): thrown once
    /// that plaintext is read, as the age tool does.
    private var pendingError: AgeError?

    /// Bytes read from `source` so far (the file's own bytes, armored or not), for progress.
    public var ciphertextBytesRead: Int64 { counter.count }

    /// - Parameters:
    ///   - source: the age file.
    ///   - name: the file's name, for messages.
    ///   - keys: identities and/or a passphrase.
    /// - Throws: `.damagedHeader`, `.unsupportedVersion`, `.armor`, `.noIdentityMatches`,
    ///   `.wrongPassphrase`, `.workFactorTooLarge`, `.headerMAC`, `.io`, `.crypto`.
    public var handleOwners: [HandleOwner] { [cipher.owner] + input.handleOwners }

    public init(source: ByteSource, name: String, keys: AgeKeys) throws(AgeError) {
        self.name = name
        counter = CountedSource(source)
        let (input, _) = try AgeFormat.openInput(counter, name: name)
        self.input = input
        let header = try AgeHeader.read(from: input, name: name)
        let fileKey = try AgeUnwrap.fileKey(header: header, keys: keys, name: name)

        let macKey = try fileKey.withBytes { (key) throws(AgeError) in try LibCrypto.hkdfSHA256(key: key, salt: [], info: "header") }
        let mac = try LibCrypto.hmacSHA256(key: macKey, data: header.macInput)
        guard mac.count == header.mac.count, CRYPTO_memcmp(mac, header.mac, mac.count) == 0 else {
            throw AgeError(.headerMAC, "\(name): the age header's MAC does not match: the header was changed or damaged")
        }

        var nonce = [UInt8](repeating: 0, count: 16)
        let got = try typedAge { try nonce.withUnsafeMutableBytes { bytes in try input.readFully(into: bytes) } }
        guard got == 16 else {
            throw AgeError(.damagedHeader, got == 0
                ? "\(name): the file ends after the age header, before the payload's nonce: it was cut short"
                : "\(name): the file ends inside the payload's nonce (\(got) of its 16 bytes): it was cut short")
        }
        let payloadKey = try fileKey.withBytes { (key) throws(AgeError) in try LibCrypto.hkdfSHA256(key: key, salt: nonce, info: "payload") }
        cipher = try ChaChaPoly(key: payloadKey)
        payloadStart = input.offset
        sealed = .allocate(byteCount: Self.sealedChunkSize, alignment: 16)
        plain = .allocate(byteCount: AgeFormat.chunkSize, alignment: 16)
    }

    deinit {
        OPENSSL_cleanse(plain.baseAddress, plain.count)
        plain.deallocate()
        sealed.deallocate()
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try readPlaintext(into: buffer)
    }

    private func readPlaintext(into buffer: UnsafeMutableRawBufferPointer) throws(AgeError) -> Int {
        guard buffer.count > 0 else { return 0 }
        while plainStart == plainEnd {
            if let error = pendingError { throw error }
            if finished { return 0 }
            try openChunk()
        }
        let count = Swift.min(plainEnd - plainStart, buffer.count)
        buffer.baseAddress!.copyMemory(from: plain.baseAddress! + plainStart, byteCount: count)
        plainStart += count
        return count
    }

    private func nonce(final: Bool) -> [UInt8] { ChaChaPoly.streamNonce(chunk: chunkIndex, final: final) }

    private func openChunk() throws(AgeError) {
        let offset = input.offset
        let where_ = "chunk \(chunkIndex) at offset \(offset)"
        let count = try input.readFully(into: sealed)
        if count == 0 {
            throw AgeError(.truncated, chunkIndex == 0
                ? "\(name): the file ends after the payload's nonce, without any chunk: it was cut short"
                : "\(name): the file ends after chunk \(chunkIndex - 1) without a final chunk (at offset \(offset)): it was cut short")
        }
        let chunk = UnsafeRawBufferPointer(rebasing: sealed[0..<count])
        var final = count < Self.sealedChunkSize
        var opened: Int?
        if final {
            guard chunkIndex == 0 || count > ChaChaPoly.tagSize else {
                throw AgeError(.badChunk, count == ChaChaPoly.tagSize
                    ? "\(name): \(where_) is an empty final chunk, which only an empty file may have: the file is damaged"
                    : "\(name): \(where_) is \(count) bytes, shorter than a chunk's tag: the file was cut short or damaged")
            }
            opened = try cipher.open(nonce: nonce(final: true), chunk, into: plain)
        } else {
            opened = try cipher.open(nonce: nonce(final: false), chunk, into: plain)
            if opened == nil {
                // A full-length chunk may also be the final one.
                opened = try cipher.open(nonce: nonce(final: true), chunk, into: plain)
                final = opened != nil
            }
        }
        guard let length = opened else {
            OPENSSL_cleanse(plain.baseAddress, plain.count)
            let what = count < Self.sealedChunkSize
                ? "fails its authentication tag (damaged, cut short inside it, or with data appended)"
                : "fails its authentication tag"
            throw AgeError(.badChunk, "\(name): \(where_) \(what): the file is damaged or was changed")
        }
        guard chunkIndex < UInt64.max else { throw AgeError(.badChunk, "\(name): too many chunks") }
        chunkIndex += 1
        plainStart = 0
        plainEnd = length
        if final {
            finished = true
            var probe: UInt8 = 0
            let extra = try typedAge { try withUnsafeMutableBytes(of: &probe) { try input.read(into: $0) } }
            if extra > 0 {
                pendingError = AgeError(.trailingData, "\(name): data follows the final chunk, at offset \(input.offset - 1): the file is damaged or something was appended")
            }
        }
    }
}

/// Unwrapping the file key from the header's stanzas with the keys given.
enum AgeUnwrap {
    static let x25519Label: StaticString = "age-encryption.org/v1/X25519"
    static let scryptLabel = Array("age-encryption.org/v1/scrypt".utf8)

    /// The file key, derived from the keys and recorded with them (which wipe their secrets
    /// once the files they are for are open), or the one they derived for this header before.
    static func fileKey(header: AgeHeader, keys: AgeKeys, name: String) throws(AgeError) -> SecretBytes {
        if let known = keys.opened.fileKey(forHeaderMAC: header.mac) { return known }
        guard !keys.opened.isWiped else {
            throw AgeError(.noIdentityMatches, "\(name): the keys given were wiped once the files this command opens were open, and this is another file")
        }
        let fileKey = try derive(header: header, keys: keys, name: name)
        keys.opened.derived(fileKey, forHeaderMAC: header.mac)
        return fileKey
    }

    private static func derive(header: AgeHeader, keys: AgeKeys, name: String) throws(AgeError) -> SecretBytes {
        func damaged(_ what: String) -> AgeError { AgeError(.damagedHeader, "\(name): the age header is damaged: \(what)") }
        let stanzas = header.stanzas
        if stanzas.contains(where: { $0.type == "scrypt" }) {
            guard stanzas.count == 1 else { throw damaged("an scrypt (passphrase) stanza must be the only stanza, and there are \(stanzas.count)") }
            return try scrypt(stanzas[0], keys: keys, name: name)
        }
        for identity in keys.identities {
            for (index, stanza) in stanzas.enumerated() where stanza.type == "X25519" {
                guard stanza.arguments.count == 1, let share = AgeBase64.decode(Array(stanza.arguments[0].utf8)), share.count == 32 else {
                    throw damaged("X25519 stanza \(index + 1) must have one argument, a 32-byte share in canonical base64")
                }
                guard stanza.body.count == 32 else { throw damaged("X25519 stanza \(index + 1) does not wrap a 16-byte file key") }
                guard let shared = try LibCrypto.x25519(secret: identity.secret, peer: share) else {
                    throw damaged("X25519 stanza \(index + 1) has a low-order share")
                }
                let wrapKey = try shared.withBytes { (bytes) throws(AgeError) in
                    try LibCrypto.hkdfSHA256(key: bytes, salt: share + identity.recipient.publicKey, info: x25519Label)
                }
                if let fileKey = try open(stanza.body, wrapKey: wrapKey) { return fileKey }
            }
        }
        throw noMatch(stanzas, keys: keys, name: name)
    }

    static func noMatch(_ stanzas: [AgeStanza], keys: AgeKeys, name: String) -> AgeError {
        // The payload's length is no recipient.
        let stanzas = AgePayloadLength.recipientStanzas(stanzas)
        var counts: [(String, Int)] = []
        for stanza in stanzas {
            if let i = counts.firstIndex(where: { $0.0 == stanza.type }) { counts[i].1 += 1 } else { counts.append((stanza.type, 1)) }
        }
        let shown = counts.prefix(8).map { $0.1 > 1 ? "\($0.0) ×\($0.1)" : $0.0 }.joined(separator: ", ") + (counts.count > 8 ? ", …" : "")
        // A stanza whose sealed file key was damaged reads exactly as one for another key.
        let given = keys.identities.isEmpty ? "no identity was given"
            : "none of the \(keys.identities.count) identities given opens it (or its header was damaged, which reads the same: try the key on another copy)"
        return AgeError(.noIdentityMatches, "\(name): no identity matches: the file is encrypted to \(stanzas.count) stanza(s) of type \(shown.isEmpty ? "none" : shown), and \(given)")
    }

    private static func scrypt(_ stanza: AgeStanza, keys: AgeKeys, name: String) throws(AgeError) -> SecretBytes {
        func damaged(_ what: String) -> AgeError { AgeError(.damagedHeader, "\(name): the age header is damaged: \(what)") }
        guard stanza.arguments.count == 2, let salt = AgeBase64.decode(Array(stanza.arguments[0].utf8)), salt.count == 16 else {
            throw damaged("the scrypt stanza must have two arguments, a 16-byte salt in canonical base64 and a work factor")
        }
        let factor = Array(stanza.arguments[1].utf8)
        guard let first = factor.first, first >= UInt8(ascii: "1"), first <= UInt8(ascii: "9"),
              factor.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { throw damaged("the scrypt work factor is not a decimal number without leading zeros") }
        guard factor.count <= 2, let logN = Int(stanza.arguments[1]), logN <= AgeFormat.maximumWorkFactor else {
            throw AgeError(.workFactorTooLarge, "\(name): the scrypt work factor \(factor.count <= 4 ? stanza.arguments[1] : "over 9999") is above the limit of \(AgeFormat.maximumWorkFactor): refused before any work (it would take minutes and gigabytes)")
        }
        guard stanza.body.count == 32 else { throw damaged("the scrypt stanza does not wrap a 16-byte file key") }
        guard let passphraseSource = keys.passphrase else {
            throw AgeError(.noIdentityMatches, "\(name): no identity matches: the file is encrypted with a passphrase (scrypt), and no passphrase was given")
        }
        var passphrase = try typedAge(passphraseSource)
        defer { passphrase.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
        let wrapKey = try LibCrypto.scrypt(passphrase: passphrase, salt: scryptLabel + salt, logN: logN)
        guard let fileKey = try open(stanza.body, wrapKey: wrapKey) else {
            throw AgeError(.wrongPassphrase, "\(name): wrong passphrase (the passphrase does not open the file; a damaged header reads the same: try it on another copy)")
        }
        return fileKey
    }

    /// The file key in a stanza body (32 bytes: 16 sealed and a tag), or nil when the key does
    /// not open it.
    private static func open(_ body: [UInt8], wrapKey: SecretBytes) throws(AgeError) -> SecretBytes? {
        let fileKey = SecretBytes(count: 16)
        let aead = try ChaChaPoly(key: wrapKey)
        let length = try typedAge {
            try body.withUnsafeBytes { sealed in
                try fileKey.withMutableBytes { out in try aead.open(nonce: [UInt8](repeating: 0, count: 12), sealed, into: out) }
            }
        }
        return length == 16 ? fileKey : nil
    }
}
