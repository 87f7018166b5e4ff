import CCrypto
import PulseSystem

/// Writes the age encryption (binary, never armored) of the bytes written to it into `output`:
/// the header when created, then 64 KiB chunks as they fill; `finish()` seals the final chunk
/// (one empty final chunk for an empty plaintext) and finishes `output`. Memory is two chunk
/// buffers whatever the size (three over a rewritable output). A new random file key and
/// payload nonce for every file.
///
/// Over an output that can rewrite what it wrote (a file), the plaintext's first chunk can be
/// rewritten too (`patch`, within its first 64 KiB): that chunk is sealed last and written into
/// the room left for it. A gzip header carries a checksum of the stream after it, known only at
/// the end; so an encrypted archive is written in one pass, and its plaintext never touches a disk.
///
/// A file to public keys records its payload's length in its header (`AgePayloadLength`), so
/// that `prune`, which has no key, can tell a copy cut short from a whole file: written at the
/// start when the caller knows the plaintext's length, else rewritten in place at `finish`
/// over a rewritable output, with the header's MAC made again.
public final class AgeEncryptingSink: RewritableSink {
    /// How the header records the payload's length.
    private enum LengthRecord {
        /// The caller said how long the plaintext is: recorded at the start, checked at the end.
        case announced(payload: Int64)
        /// Recorded as zeros at the start, rewritten at `finish` (the output is rewritable).
        case rewrittenAtEnd
    }

    /// The length record and what rewriting it takes: the header as the MAC covers it, where
    /// its digits are in it, where the header is in the output, and the MAC's key.
    private struct HeaderRecord {
        let record: LengthRecord
        var macInput: [UInt8]
        let digitsOffset: Int
        let headerOffset: Int64
        let macKey: SecretBytes
    }
    private let output: ByteSink
    /// The plaintext's first chunk, kept to be sealed at `finish`, once written past it over a
    /// rewritable output; and where its sealed form goes in that output.
    private var firstChunk: UnsafeMutableRawBufferPointer?
    private var firstChunkOffset: Int64 = 0
    /// Plaintext bytes accepted so far.
    public private(set) var bytesWritten: Int64 = 0
    private let cipher: ChaChaPoly
    private var plain: UnsafeMutableRawBufferPointer
    private var sealed: UnsafeMutableRawBufferPointer
    private var buffered = 0
    private var chunkIndex: UInt64 = 0
    private var finished = false
    private var lengthRecord: HeaderRecord?
    /// The payload's bytes so far: the nonce, then every sealed chunk with its tag.
    private var payloadBytes: Int64 = 16

    public var handleOwners: [HandleOwner] { [cipher.owner] + output.handleOwners }

    /// Encrypts to X25519 recipients (one stanza each).
    /// - Parameter plaintextLength: the bytes that will be written, when known before the first
    ///   (recorded at the start; `finish` refuses another count). Without it the length is
    ///   recorded only over a rewritable output.
    /// - Throws: `.recipientSyntax` when `recipients` is empty or one is a low-order point;
    ///   `.crypto`; errors of `output`.
    public convenience init(output: ByteSink, recipients: [AgeX25519Recipient], plaintextLength: Int64? = nil) throws {
        guard !recipients.isEmpty else { throw AgeError(.recipientSyntax, "no recipient to encrypt to") }
        try AgeFormat.checkRecipientCount(recipients.count)
        let fileKey = try SecretBytes.random(count: 16)
        var stanzas: [AgeStanza] = []
        for recipient in recipients {
            let ephemeral = try SecretBytes.random(count: 32)
            let share = try LibCrypto.x25519PublicKey(secret: ephemeral)
            guard let shared = try LibCrypto.x25519(secret: ephemeral, peer: recipient.publicKey) else {
                throw AgeError(.recipientSyntax, "the recipient \(recipient.bech32) is not a usable X25519 public key (a low-order point)")
            }
            let wrapKey = try shared.withBytes { (bytes) throws(AgeError) in
                try LibCrypto.hkdfSHA256(key: bytes, salt: share + recipient.publicKey, info: AgeUnwrap.x25519Label)
            }
            stanzas.append(AgeStanza(type: "X25519", arguments: [String(decoding: AgeBase64.encode(share), as: UTF8.self)],
                                     body: try Self.wrap(fileKey, with: wrapKey)))
        }
        var record: LengthRecord?
        if let plaintextLength {
            guard let payload = AgePayloadLength.payloadLength(plaintext: plaintextLength) else {
                throw AgeError(.io, "cannot encrypt \(plaintextLength) bytes: no age file of that length can be written")
            }
            record = .announced(payload: payload)
        } else if output is RewritableSink {
            record = .rewrittenAtEnd
        }
        try self.init(output: output, fileKey: fileKey, stanzas: stanzas, lengthRecord: record)
    }

    /// Encrypts with a passphrase (one scrypt stanza, work factor `workFactor`, 18 by default
    /// as the age tool; at most 22). The caller refuses an empty passphrase if it wants to.
    /// - Throws: `.workFactorTooLarge` for a work factor outside 1…22; `.crypto`; errors of
    ///   `output`.
    public convenience init(output: ByteSink, passphrase: [UInt8], workFactor: Int = AgeFormat.defaultWorkFactor) throws {
        guard workFactor >= 1, workFactor <= AgeFormat.maximumWorkFactor else {
            throw AgeError(.workFactorTooLarge, "the scrypt work factor \(workFactor) is outside 1…\(AgeFormat.maximumWorkFactor)")
        }
        let fileKey = try SecretBytes.random(count: 16)
        var salt = [UInt8](repeating: 0, count: 16)
        try salt.withUnsafeMutableBytes { try LibCrypto.randomBytes($0) }
        let wrapKey = try LibCrypto.scrypt(passphrase: passphrase, salt: AgeUnwrap.scryptLabel + salt, logN: workFactor)
        let stanza = AgeStanza(type: "scrypt", arguments: [String(decoding: AgeBase64.encode(salt), as: UTF8.self), String(workFactor)],
                               body: try Self.wrap(fileKey, with: wrapKey))
        // No length record: an scrypt stanza must be the only one in its header.
        try self.init(output: output, fileKey: fileKey, stanzas: [stanza], lengthRecord: nil)
    }

    private init(output: ByteSink, fileKey: SecretBytes, stanzas: [AgeStanza], lengthRecord record: LengthRecord?) throws {
        var stanzas = stanzas
        if let record {
            let payload: Int64
            switch record {
            case .announced(let length): payload = length
            case .rewrittenAtEnd: payload = 0
            }
            stanzas.append(AgeStanza(type: AgePayloadLength.stanzaType, arguments: [AgePayloadLength.argument(payload)], body: []))
        }
        var header = AgeHeader.intro + [UInt8(ascii: "\n")]
        var digitsOffset = 0
        for stanza in stanzas {
            if stanza.type == AgePayloadLength.stanzaType { digitsOffset = header.count + 3 + stanza.type.utf8.count + 1 }
            header += Array("-> ".utf8) + Array(([stanza.type] + stanza.arguments).joined(separator: " ").utf8) + [UInt8(ascii: "\n")]
            let body = AgeBase64.encode(stanza.body)
            var index = 0
            repeat {  // lines of 64 columns, the last shorter (empty when the body fills the line)
                let line = body[index..<Swift.min(index + 64, body.count)]
                header += line + [UInt8(ascii: "\n")]
                index += 64
            } while index <= body.count
        }
        header += Array("---".utf8)
        // The MAC line is 47 bytes more: what a reader of ours refuses is never written.
        guard !AgeHeader.exceedsLimit(header.count + 1 + 43 + 1) else {
            throw AgeError(.tooManyRecipients, "the age header would be longer than the \(AgeHeader.maxHeaderBytes) bytes readers accept")
        }
        let macKey = try fileKey.withBytes { (key) throws(AgeError) in try LibCrypto.hkdfSHA256(key: key, salt: [], info: "header") }
        if let record {
            lengthRecord = HeaderRecord(record: record, macInput: header, digitsOffset: digitsOffset,
                                        headerOffset: (output as? RewritableSink)?.bytesWritten ?? 0, macKey: macKey)
        }
        let mac = try LibCrypto.hmacSHA256(key: macKey, data: header)
        header += [UInt8(ascii: " ")] + AgeBase64.encode(mac) + [UInt8(ascii: "\n")]

        var nonce = [UInt8](repeating: 0, count: 16)
        try nonce.withUnsafeMutableBytes { try LibCrypto.randomBytes($0) }
        header += nonce
        let payloadKey = try fileKey.withBytes { (key) throws(AgeError) in try LibCrypto.hkdfSHA256(key: key, salt: nonce, info: "payload") }
        self.output = output
        cipher = try ChaChaPoly(key: payloadKey)
        plain = .allocate(byteCount: AgeFormat.chunkSize, alignment: 16)
        sealed = .allocate(byteCount: AgeFormat.chunkSize + ChaChaPoly.tagSize, alignment: 16)
        try header.withUnsafeBytes { try output.write($0) }
    }

    deinit {
        OPENSSL_cleanse(plain.baseAddress, plain.count)
        plain.deallocate()
        sealed.deallocate()
        if let firstChunk {
            OPENSSL_cleanse(firstChunk.baseAddress, firstChunk.count)
            firstChunk.deallocate()
        }
    }

    private static func wrap(_ fileKey: SecretBytes, with wrapKey: SecretBytes) throws(AgeError) -> [UInt8] {
        let aead = try ChaChaPoly(key: wrapKey)
        var body = [UInt8](repeating: 0, count: 32)
        _ = try typedAge {
            try fileKey.withBytes { key in
                try body.withUnsafeMutableBytes { out in try aead.seal(nonce: [UInt8](repeating: 0, count: 12), key, into: out) }
            }
        }
        return body
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard !finished else { throw AgeError(.io, "write after the end of the encrypted stream") }
        var index = 0
        while index < bytes.count {
            if buffered == AgeFormat.chunkSize {
                // More plaintext follows a full chunk, so that chunk is not the final one.
                try seal(final: false)
            }
            let count = Swift.min(AgeFormat.chunkSize - buffered, bytes.count - index)
            (plain.baseAddress! + buffered).copyMemory(from: bytes.baseAddress! + index, byteCount: count)
            buffered += count
            index += count
            bytesWritten += Int64(count)
        }
    }

    /// Rewrites plaintext already written, within the first chunk (64 KiB): while that chunk is
    /// still buffered, or over a rewritable output.
    /// - Throws: `.io` for bytes past the first chunk, or when the first chunk is sealed already.
    public func patch(_ bytes: [UInt8], at offset: Int64) throws {
        guard !finished, offset >= 0, offset + Int64(bytes.count) <= min(bytesWritten, Int64(AgeFormat.chunkSize)) else {
            throw AgeError(.io, "cannot rewrite \(bytes.count) bytes at offset \(offset) of an encrypted stream: only its first chunk, before the end")
        }
        let target: UnsafeMutableRawBufferPointer
        if chunkIndex == 0 {
            target = plain
        } else if let firstChunk {
            target = firstChunk
        } else {
            throw AgeError(.io, "cannot rewrite the first chunk of an encrypted stream: it is sealed and written already")
        }
        bytes.withUnsafeBytes { (target.baseAddress! + Int(offset)).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    }

    public func finish() throws {
        guard !finished else { return }
        try seal(final: true)
        finished = true
        OPENSSL_cleanse(plain.baseAddress, plain.count)
        if let firstChunk, let rewritable = output as? RewritableSink {
            let nonce = ChaChaPoly.streamNonce(chunk: 0, final: false)
            let count = try cipher.seal(nonce: nonce, UnsafeRawBufferPointer(firstChunk), into: sealed)
            try rewritable.patch(Array(UnsafeRawBufferPointer(rebasing: sealed[0..<count])), at: firstChunkOffset)
            OPENSSL_cleanse(firstChunk.baseAddress, firstChunk.count)
        }
        try recordLength()
        try output.finish()
    }

    /// Checks the length announced at the start, or writes the real one into the header and
    /// makes its MAC again.
    private func recordLength() throws {
        guard var header = lengthRecord else { return }
        switch header.record {
        case .announced(let payload):
            guard payload == payloadBytes else {
                throw AgeError(.io, "the encrypted stream is \(payloadBytes) bytes, not the \(payload) its header records: the plaintext's length was announced wrong")
            }
        case .rewrittenAtEnd:
            guard let rewritable = output as? RewritableSink else { return }
            let digits = Array(AgePayloadLength.argument(payloadBytes).utf8)
            header.macInput.replaceSubrange(header.digitsOffset..<header.digitsOffset + digits.count, with: digits)
            let mac = try LibCrypto.hmacSHA256(key: header.macKey, data: header.macInput)
            let rewritten = Array(header.macInput[header.digitsOffset...]) + [UInt8(ascii: " ")] + AgeBase64.encode(mac) + [UInt8(ascii: "\n")]
            try rewritable.patch(rewritten, at: header.headerOffset + Int64(header.digitsOffset))
        }
    }

    private func seal(final: Bool) throws {
        if chunkIndex == 0, !final, let rewritable = output as? RewritableSink {
            // Room for the first chunk, sealed at `finish` once nothing can change it any more.
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: AgeFormat.chunkSize, alignment: 16)
            copy.copyMemory(from: UnsafeRawBufferPointer(plain))
            firstChunk = copy
            firstChunkOffset = rewritable.bytesWritten
            let room = [UInt8](repeating: 0, count: AgeFormat.chunkSize + ChaChaPoly.tagSize)
            try room.withUnsafeBytes { try output.write($0) }
            payloadBytes += Int64(room.count)
            chunkIndex = 1
            buffered = 0
            return
        }
        let nonce = ChaChaPoly.streamNonce(chunk: chunkIndex, final: final)
        let count = try cipher.seal(nonce: nonce, UnsafeRawBufferPointer(rebasing: plain[0..<buffered]), into: sealed)
        try output.write(UnsafeRawBufferPointer(rebasing: sealed[0..<count]))
        payloadBytes += Int64(count)
        guard chunkIndex < UInt64.max else { throw AgeError(.io, "too many chunks") }
        chunkIndex += 1
        buffered = 0
    }
}
